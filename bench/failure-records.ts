/**
 * Synthetic failure-log records for the report benchmarks: the mix an agent fleet writes (about
 * 86 % failed calls over 8 tools and 5 failure types, with 1–2 argument fields on the invalid ones
 * and a few hundred distinct received values; 12 % recoveries; 2 % breaker trips), four records per
 * run. Deterministic: record `i` is always the same.
 */
import type { FailureLogRecord } from '../src/ground/ports/failure-log.ts';

const TOOLS = [
  'book_reservation',
  'update_reservation_flights',
  'search_direct_flight',
  'search_onestop_flight',
  'cancel_reservation',
  'get_user_details',
  'send_certificate',
  'update_reservation_passengers',
];
const FAILURES = [
  { type: 'invalid_parameter', code: 'SCHEMA_VALIDATION_FAILED' },
  { type: 'invalid_parameter', code: 'INVALID_TYPE' },
  { type: 'logic', code: 'PRECONDITION_FAILED' },
  { type: 'environment', code: 'UPSTREAM_UNAVAILABLE' },
  { type: 'permission', code: 'FORBIDDEN' },
  { type: 'environment', code: 'TIMEOUT' },
] as const;
const START_MS = Date.UTC(2026, 0, 1);

/** Record `index` of the synthetic log (about 520 bytes of JSON for a failed call). */
export function syntheticFailureRecord(index: number): FailureLogRecord {
  const toolName = TOOLS[(index * 7) % TOOLS.length]!;
  const base = {
    at: new Date(START_MS + index * 50).toISOString(),
    toolName,
    runId: `run_${Math.floor(index / 4).toString(36)}`,
    sessionId: `sess_${Math.floor(index / 40).toString(36)}`,
  };
  const roll = index % 50;
  if (roll === 49) return { ...base, kind: 'breaker-open', scope: index % 100 === 49 ? 'shared' : 'session' };
  if (roll % 8 === 3) {
    const rounds = 1 + (index % 4);
    return {
      ...base,
      kind: 'recovery',
      recoveredWith: TOOLS[(index + 3) % TOOLS.length]!,
      failedAtStep: 2,
      recoveredAtStep: 2 + rounds,
      rounds,
      failures: 1 + (index % 3),
    };
  }
  const failure = FAILURES[index % FAILURES.length]!;
  const invalid = failure.type === 'invalid_parameter';
  return {
    ...base,
    kind: 'tool-failure',
    traceId: (index * 2654435761).toString(16).padStart(32, '0').slice(-32),
    callId: `call_${index.toString(36)}`,
    stepIndex: index % 9,
    type: failure.type,
    code: failure.code,
    message: invalid
      ? `arguments do not match the schema of ${toolName}: /passengers/${index % 3}/dob must be a date`
      : `flight HAT${(index % 300).toString().padStart(3, '0')} not available on date 2026-05-${10 + (index % 20)}`,
    fields: invalid
      ? [
          {
            path: `/passengers/${index % 3}/dob`,
            problem: 'format',
            expected: 'date (YYYY-MM-DD)',
            received: `"${1 + (index % 12)}/${1 + (index % 28)}/1990"`,
          },
          ...(index % 2 === 0
            ? [{ path: '/cabin', problem: 'enum', expected: 'basic_economy | economy | business', received: `"${['first', 'premium', 'coach'][index % 3]}"` }]
            : []),
        ]
      : [],
    attempts: 1 + (index % 3),
    durationMs: 5 + (index % 200),
  };
}
