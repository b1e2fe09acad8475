/**
 * Golden JSON for the envelope: it is a wire format, so any change to it shows in review as a diff
 * of test/golden/envelopes.json. To accept an intended change: TOOLRUN_UPDATE_GOLDEN=1 npx vitest run test/envelope-golden.test.ts
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createToolRuntime, defineTool, ToolError, type ToolResult } from '../src/index.ts';
import { createSharedBreaker } from '../src/policies/shared-breaker.ts';
import { createMemoryBreakerStateStore } from '../src/stores/memory/memory-breaker-state-store.ts';
import { createAutoAdvancingClock } from '../src/testing/auto-advancing-clock.ts';

const GOLDEN = new URL('./golden/envelopes.json', import.meta.url);

const booking = defineTool({
  name: 'book_reservation',
  description: 'Book a reservation',
  inputSchema: {
    type: 'object',
    properties: {
      user_id: { type: 'string' },
      cabin: { type: 'string', enum: ['basic_economy', 'economy', 'business'] },
      date: { type: 'string', format: 'date' },
      passengers: { type: 'integer', minimum: 1, maximum: 9 },
    },
    required: ['user_id', 'cabin', 'date'],
    additionalProperties: false,
  },
  fallbacks: ['transfer_to_human_agents'],
  timeoutMs: 1000,
  execute: async ({ user_id }) => {
    if (user_id === 'down') throw new ToolError({ kind: 'server', status: 503, message: 'Service Unavailable' });
    if (user_id === 'slow') return new Promise(() => undefined);
    if (user_id === 'blocked')
      throw new ToolError({ kind: 'precondition', status: 409, message: 'Error: the reservation cannot be changed within 24 hours of departure' });
    if (user_id === 'denied') throw new ToolError({ kind: 'auth', status: 401, message: 'invalid API key sk-live-0123456789abcdefghijkl' });
    if (user_id === 'huge') return { rows: 'r'.repeat(300_000) };
    if (user_id === 'bigint') return { total: 10n };
    return { reservation_id: 'HATHAT', user_id };
  },
});

async function scenarios(): Promise<Record<string, ToolResult>> {
  const clock = createAutoAdvancingClock(0);
  const sharedBreaker = createSharedBreaker({ store: createMemoryBreakerStateStore(), clock, options: { failureThreshold: 1 } });
  const runtime = createToolRuntime({ tools: [booking], clock, random: () => 0, sharedBreaker });
  let index = 0;
  const run = (name: string, args: unknown, sessionId = `s${index}`) => {
    index += 1;
    return runtime.run({ name, args, callId: `call_${index}`, traceId: `trace_${index}`, sessionId });
  };
  const valid = { user_id: 'mia_li_3668', cabin: 'economy', date: '2024-05-20' };
  const results: Record<string, ToolResult> = {};
  results.success = await run('book_reservation', valid);
  results.dateFormat = await run('book_reservation', { ...valid, date: '05/20/2024' });
  results.missingRequired = await run('book_reservation', { cabin: 'economy', date: '2024-05-20' });
  results.invalidEnum = await run('book_reservation', { ...valid, cabin: 'first' });
  results.integerAsString = await run('book_reservation', { ...valid, passengers: '2' });
  results.outOfRange = await run('book_reservation', { ...valid, passengers: 12 });
  results.unknownParameter = await run('book_reservation', { ...valid, cabn: 'economy' });
  results.truncatedJson = await run('book_reservation', '{"user_id": "mia_li_3668", "cabin": "eco');
  results.concatenatedJson = await run('book_reservation', '{"user_id": "a"}{"user_id": "b"}');
  results.toolNotFound = await run('book_reservation_v2', valid);
  results.unavailableAfterRetries = await run('book_reservation', { ...valid, user_id: 'down' });
  results.timeoutNotRetried = await run('book_reservation', { ...valid, user_id: 'slow' });
  results.preconditionFailed = await run('book_reservation', { ...valid, user_id: 'blocked' });
  results.outputTooLarge = await run('book_reservation', { ...valid, user_id: 'huge' });
  results.authRejected = await run('book_reservation', { ...valid, user_id: 'denied' });
  results.circuitOpen = await run('book_reservation', valid);
  // Bounds and guards (a runtime of its own where the tool must run: the breaker above is open).
  results.unsafeInteger = await run(
    'book_reservation',
    '{"user_id": "mia_li_3668", "cabin": "economy", "date": "2024-05-20", "passengers": 12345678901234567890}',
  );
  results.manyFieldErrors = await run('book_reservation', { ...valid, ...Object.fromEntries(Array.from({ length: 30 }, (_, n) => [`extra_${n}`, n])) });
  const fresh = createToolRuntime({ tools: [booking], clock, random: () => 0, maxInFlightCalls: 1 });
  const runFresh = (name: string, args: unknown, sessionId = 'fresh') => {
    index += 1;
    return fresh.run({ name, args, callId: `call_${index}`, traceId: `trace_${index}`, sessionId });
  };
  results.notJson = await runFresh('book_reservation', { ...valid, user_id: 'bigint' });
  for (let call = 0; call < 3; call++) await runFresh('cancel_reservation', valid);
  results.hallucinatedNameRepeated = await runFresh('cancel_reservation', valid);
  const blocked = runFresh('book_reservation', { ...valid, user_id: 'slow' });
  results.callLimitExceeded = await runFresh('book_reservation', valid);
  await blocked;
  return results;
}

describe('the envelope is a wire format (golden JSON)', () => {
  it('matches test/golden/envelopes.json', async () => {
    const actual = JSON.parse(JSON.stringify(await scenarios())) as Record<string, ToolResult>;
    if (process.env.TOOLRUN_UPDATE_GOLDEN === '1' || !existsSync(GOLDEN)) {
      writeFileSync(GOLDEN, `${JSON.stringify(actual, null, 2)}\n`);
      if (process.env.CI) throw new Error('golden file was missing in CI');
    }
    const expected = JSON.parse(readFileSync(GOLDEN, 'utf8')) as Record<string, ToolResult>;
    expect(actual).toEqual(expected);
    // Invariants every envelope keeps, whatever the golden says.
    for (const result of Object.values(actual)) {
      const text = JSON.stringify(result);
      expect(text).not.toMatch(/sk-live-[a-z0-9]+/);
      expect(text).not.toMatch(/\bat .*:\d+:\d+/);
      if (result.status === 'failed') expect(result.error.suggestion.length).toBeGreaterThan(10);
      if (result.status === 'failed') expect(new TextEncoder().encode(text).length).toBeLessThanOrEqual(16_384);
    }
  });
});
