import { describe, expect, it } from 'vitest';
import { FAILURE_CODES, type FailureCode } from '../ground/failure-codes.ts';
import { createMemoryBreakerStateStore } from '../stores/memory/memory-breaker-state-store.ts';
import { createSharedBreaker } from '../policies/shared-breaker.ts';
import { createAutoAdvancingClock } from '../testing/auto-advancing-clock.ts';
import { createToolRuntime, type ToolRuntime } from './create-tool-runtime.ts';
import { defineTool } from './define-tool.ts';
import { toRetryDirective, type RetryDirective } from './retry-directive.ts';
import type { ToolCallRecord } from './tool-call-record.ts';
import { ToolError, type ToolErrorOptions } from './tool-error.ts';

const START_MS = Date.UTC(2026, 0, 1);

/** A tool that always throws the given ToolError. */
const failing = (name: string, options: ToolErrorOptions, extra: { idempotent?: boolean; fallbacks?: string[] } = {}) =>
  defineTool({
    name,
    description: `fails with ${options.kind}`,
    inputSchema: { type: 'object' },
    ...extra,
    execute: () => {
      throw new ToolError(options);
    },
  });

const booking = defineTool({
  name: 'book_flight',
  description: 'Books a flight',
  inputSchema: {
    type: 'object',
    properties: {
      date: { type: 'string', format: 'date' },
      code: { type: 'string', pattern: '^[A-Z]{3}$' },
      cabin: { type: 'string', enum: ['economy', 'business'] },
      seats: { type: 'integer', minimum: 1, maximum: 9 },
    },
    required: ['date'],
    additionalProperties: false,
  },
  execute: () => ({ booked: true }),
});

function buildRuntime(): ToolRuntime {
  const clock = createAutoAdvancingClock(START_MS);
  const sharedBreaker = createSharedBreaker({ store: createMemoryBreakerStateStore(), clock, options: { failureThreshold: 1 } });
  const self: { runtime?: ToolRuntime } = {};
  const tools = [
    booking,
    failing('flaky_search', { kind: 'server', status: 503, message: 'search is down' }, { idempotent: true }),
    failing('limited_search', { kind: 'rate_limit', status: 429, headers: { 'retry-after': '30' } }, { idempotent: true }),
    failing('reset_search', { kind: 'rate_limit', status: 429, headers: { 'x-ratelimit-reset-requests': '1m30s', 'x-ratelimit-remaining-requests': '0' } }),
    failing('slow_read', { kind: 'timeout', message: 'took too long' }, { idempotent: true }),
    failing('slow_write', { kind: 'timeout', message: 'took too long' }),
    failing('reset_read', { kind: 'network', message: 'socket hang up' }, { idempotent: true }),
    failing('crm', { kind: 'auth', status: 401, message: 'API key rejected' }),
    failing('user_files', { kind: 'auth', status: 401, message: 'user token expired', misconfiguration: false }),
    failing('forbidden', { kind: 'forbidden', status: 403 }),
    failing('lookup', { kind: 'not_found', status: 404 }),
    failing('refund', { kind: 'precondition', message: 'already refunded' }),
    failing('strict', { kind: 'invalid_input', status: 422, message: 'amount must be positive' }),
    failing('gone', { kind: 'misconfigured', status: 410, message: 'endpoint removed' }),
    failing('gone_with_fallback', { kind: 'misconfigured', status: 410 }, { fallbacks: ['book_flight'] }),
    defineTool({ name: 'buggy', description: 'throws a bug', inputSchema: { type: 'object' }, execute: () => JSON.parse('{') as unknown }),
    defineTool({ name: 'huge', description: 'too much', inputSchema: { type: 'object' }, execute: () => 'x'.repeat(400_000) }),
    defineTool({
      name: 'hang',
      description: 'waits',
      inputSchema: { type: 'object' },
      idempotent: true,
      execute: (_args, context) => new Promise((_, reject) => context.signal.addEventListener('abort', () => reject(context.signal.reason))),
    }),
    defineTool({
      name: 'recurse',
      description: 'calls itself',
      inputSchema: { type: 'object' },
      execute: async () => self.runtime!.run({ name: 'recurse', args: {} }),
    }),
  ];
  self.runtime = createToolRuntime({ tools, clock, sharedBreaker, retry: { maxAttempts: 1 }, maxInFlightCalls: 4 });
  return self.runtime;
}

/** Runs one call as an engine would (the runtime's own retries off) and returns its record. */
async function call(
  runtime: ToolRuntime,
  name: string,
  args: unknown = {},
  extra: { signal?: AbortSignal; deadlineAt?: number; sessionId?: string } = {},
): Promise<ToolCallRecord> {
  return runtime.execute({ name, args, runId: 'run_1', sessionId: extra.sessionId ?? `session_${name}`, maxAttempts: 1, ...extra });
}

const codeOf = (record: ToolCallRecord): string => (record.result.status === 'failed' ? record.result.error.code : 'success');

/** Every failure code with one real call that produces it and the directive it maps to on an engine's first attempt. */
const CASES: Record<FailureCode, { produce: (runtime: ToolRuntime) => Promise<ToolCallRecord>; directive: RetryDirective['action'] }> = {
  MALFORMED_ARGUMENTS: { produce: (r) => call(r, 'book_flight', '{"date": '), directive: 'return-to-model' },
  MISSING_REQUIRED: { produce: (r) => call(r, 'book_flight', {}), directive: 'return-to-model' },
  INVALID_TYPE: { produce: (r) => call(r, 'book_flight', { date: 20260105 }), directive: 'return-to-model' },
  INVALID_ENUM: { produce: (r) => call(r, 'book_flight', { date: '2026-01-05', cabin: 'first' }), directive: 'return-to-model' },
  INVALID_FORMAT: { produce: (r) => call(r, 'book_flight', { date: '2026-01-05', code: 'jfk' }), directive: 'return-to-model' },
  DATE_FORMAT_ERROR: { produce: (r) => call(r, 'book_flight', { date: '2026/1/5' }), directive: 'return-to-model' },
  OUT_OF_RANGE: { produce: (r) => call(r, 'book_flight', { date: '2026-01-05', seats: 12 }), directive: 'return-to-model' },
  UNKNOWN_PARAMETER: { produce: (r) => call(r, 'book_flight', { date: '2026-01-05', seets: 2 }), directive: 'return-to-model' },
  SCHEMA_VALIDATION_FAILED: { produce: (r) => call(r, 'book_flight', { date: '2026-01-05', cabin: 'first', seats: 12 }), directive: 'return-to-model' },
  INVALID_INPUT: { produce: (r) => call(r, 'strict'), directive: 'return-to-model' },
  TIMEOUT: { produce: (r) => call(r, 'slow_read'), directive: 'retry' },
  UNAVAILABLE: { produce: (r) => call(r, 'flaky_search'), directive: 'retry' },
  RATE_LIMITED: { produce: (r) => call(r, 'limited_search'), directive: 'retry' },
  NETWORK_ERROR: { produce: (r) => call(r, 'reset_read'), directive: 'retry' },
  BUDGET_EXHAUSTED: { produce: (r) => call(r, 'flaky_search', {}, { deadlineAt: START_MS - 1 }), directive: 'dead-letter' },
  PERMISSION_DENIED: { produce: (r) => call(r, 'forbidden'), directive: 'return-to-model' },
  AUTH_EXPIRED: { produce: (r) => call(r, 'user_files'), directive: 'return-to-model' },
  TOOL_NOT_FOUND: { produce: (r) => call(r, 'book_flght'), directive: 'return-to-model' },
  NOT_FOUND: { produce: (r) => call(r, 'lookup'), directive: 'return-to-model' },
  PRECONDITION_FAILED: { produce: (r) => call(r, 'refund'), directive: 'return-to-model' },
  TOOL_EXCEPTION: { produce: (r) => call(r, 'buggy'), directive: 'return-to-model' },
  OUTPUT_TOO_LARGE: { produce: (r) => call(r, 'huge'), directive: 'return-to-model' },
  CANCELLED: {
    produce: async (r) => {
      const controller = new AbortController();
      const pending = call(r, 'hang', {}, { signal: controller.signal });
      setImmediate(() => controller.abort(new Error('worker shutting down')));
      return pending;
    },
    directive: 'retry',
  },
  CALL_LIMIT_EXCEEDED: { produce: (r) => call(r, 'recurse'), directive: 'return-to-model' },
  TOO_MANY_FAILURES: {
    produce: async (r) => {
      for (let index = 0; index < 3; index++) await call(r, 'refund', {}, { sessionId: 'breaker_session' });
      return call(r, 'refund', {}, { sessionId: 'breaker_session' });
    },
    directive: 'dead-letter',
  },
  CIRCUIT_OPEN: {
    produce: async (r) => {
      await call(r, 'gone', {}, { sessionId: 'first_run' });
      return call(r, 'gone', {}, { sessionId: 'second_run' });
    },
    directive: 'dead-letter',
  },
};

const firstAttempt = { retriesSpent: 0, idempotent: true, random: () => 0 } as const;

describe('toRetryDirective: every failure code, from real envelopes', () => {
  it('every code of FAILURE_CODES has a case here (a new code fails this test until it is mapped and tested)', () => {
    expect(Object.keys(CASES).sort()).toEqual(Object.keys(FAILURE_CODES).sort());
  });

  for (const [code, { produce, directive }] of Object.entries(CASES)) {
    it(`${code} → ${directive}`, async () => {
      const record = await produce(buildRuntime());
      expect(codeOf(record)).toBe(code);
      expect(toRetryDirective(record, firstAttempt).action).toBe(directive);
    });
  }

  it('a success is returned to the model', async () => {
    const record = await call(buildRuntime(), 'book_flight', { date: '2026-01-05' });
    expect(record.result.status).toBe('success');
    expect(toRetryDirective(record, firstAttempt)).toEqual({ action: 'return-to-model' });
  });
});

describe('toRetryDirective: waits', () => {
  it("honours Retry-After: the engine waits the server's 30 s instead of an in-process sleep", async () => {
    const record = await call(buildRuntime(), 'limited_search');
    expect(record.result.status === 'failed' && record.result.error.retry_after_ms).toBe(30_000);
    expect(toRetryDirective(record, firstAttempt)).toEqual({ action: 'retry', afterMs: 30_000, basis: 'retry-after' });
  });

  it('honours a rate-limit reset header (x-ratelimit-reset-requests: 1m30s)', async () => {
    const record = await call(buildRuntime(), 'reset_search');
    expect(toRetryDirective(record, firstAttempt)).toEqual({ action: 'retry', afterMs: 90_000, basis: 'retry-after' });
  });

  it("without a header: toolrun's backoff for the engine's retry number (500 ms, 1 s, 2 s, plus jitter)", async () => {
    const record = await call(buildRuntime(), 'flaky_search');
    const budget = { retryBudget: 5, random: () => 0.5 };
    expect(toRetryDirective(record, { ...budget, retriesSpent: 0 })).toEqual({ action: 'retry', afterMs: 550, basis: 'backoff' });
    expect(toRetryDirective(record, { ...budget, retriesSpent: 1 })).toEqual({ action: 'retry', afterMs: 1050, basis: 'backoff' });
    expect(toRetryDirective(record, { ...budget, retriesSpent: 2 })).toEqual({ action: 'retry', afterMs: 2050, basis: 'backoff' });
    const custom = toRetryDirective(record, {
      retriesSpent: 0,
      random: () => 0,
      policy: { minDelayMs: 250, backoff: { baseDelayMs: 10, factor: 2, maxDelayMs: 1000, jitterMs: 0 } },
    });
    expect(custom).toEqual({ action: 'retry', afterMs: 250, basis: 'backoff' });
  });

  it("a wait that does not fit the run's remaining time dead-letters instead of sleeping past it", async () => {
    const record = await call(buildRuntime(), 'limited_search');
    expect(toRetryDirective(record, { ...firstAttempt, remainingMs: 30_000 })).toEqual({ action: 'dead-letter', reason: 'retry-budget-exhausted' });
    expect(toRetryDirective(record, { ...firstAttempt, remainingMs: 30_001 }).action).toBe('retry');
  });
});

describe('toRetryDirective: budgets and misconfiguration', () => {
  it("the run's retry budget (2 by default): attempts 1 and 2 retry, the 3rd failure dead-letters", async () => {
    const record = await call(buildRuntime(), 'flaky_search');
    const actions = [0, 1, 2].map((retriesSpent) => toRetryDirective(record, { retriesSpent, random: () => 0 }).action);
    expect(actions).toEqual(['retry', 'retry', 'dead-letter']);
    expect(toRetryDirective(record, { retriesSpent: 2 })).toEqual({ action: 'dead-letter', reason: 'retry-budget-exhausted' });
  });

  it('in-process retries of the call count against the budget', async () => {
    const clock = createAutoAdvancingClock(START_MS);
    const runtime = createToolRuntime({
      tools: [failing('flaky', { kind: 'server', status: 503 })],
      clock,
      retry: { maxAttempts: 3, backoff: { baseDelayMs: 1, jitterMs: 0 } },
    });
    const record = await runtime.execute({ name: 'flaky', args: {}, runId: 'run_1' });
    expect(record.result.attempts).toBe(3);
    expect(toRetryDirective(record, { retriesSpent: 0 })).toEqual({ action: 'dead-letter', reason: 'retry-budget-exhausted' });
  });

  it('a tool broken for everyone (credential rejected) dead-letters at once; the envelope alone cannot tell', async () => {
    const record = await call(buildRuntime(), 'crm');
    expect(codeOf(record)).toBe('AUTH_EXPIRED');
    expect(record.misconfiguration).toBe(true);
    expect(toRetryDirective(record, firstAttempt)).toEqual({ action: 'dead-letter', reason: 'misconfiguration' });
    expect(toRetryDirective({ result: record.result }, firstAttempt)).toEqual({ action: 'return-to-model' });
  });

  it('an endpoint gone (misconfigured 410) dead-letters, and the next run meets the open shared breaker', async () => {
    const runtime = buildRuntime();
    const first = await call(runtime, 'gone', {}, { sessionId: 'run_a' });
    expect(codeOf(first)).toBe('UNAVAILABLE');
    expect(toRetryDirective(first, firstAttempt)).toEqual({ action: 'dead-letter', reason: 'misconfiguration' });
    const second = await call(runtime, 'gone', {}, { sessionId: 'run_b' });
    expect(toRetryDirective(second, firstAttempt)).toEqual({ action: 'dead-letter', reason: 'circuit-open' });
  });

  it('a broken tool with fallbacks goes back to the model, which can use them', async () => {
    const record = await call(buildRuntime(), 'gone_with_fallback');
    expect(record.misconfiguration).toBe(true);
    expect(toRetryDirective(record, firstAttempt)).toEqual({ action: 'return-to-model' });
  });

  it('an open session breaker dead-letters with its own reason', async () => {
    const record = await CASES.TOO_MANY_FAILURES.produce(buildRuntime());
    expect(toRetryDirective(record, firstAttempt)).toEqual({ action: 'dead-letter', reason: 'session-breaker-open' });
  });

  it('a timeout of a tool that is not idempotent goes back to the model: the engine must not repeat a write', async () => {
    const record = await call(buildRuntime(), 'slow_write');
    expect(codeOf(record)).toBe('TIMEOUT');
    expect(toRetryDirective(record, { retriesSpent: 0 })).toEqual({ action: 'return-to-model' });
    expect(toRetryDirective(record, { retriesSpent: 0, idempotent: true, random: () => 0 })).toEqual({ action: 'retry', afterMs: 500, basis: 'backoff' });
  });
});
