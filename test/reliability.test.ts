/**
 * Failures outside the tool call: nothing lost, nothing loops, nothing repeated — on every backend.
 * Each scenario (test/fixtures/reliability-scenarios.ts) runs in a worker thread under a bound that
 * follows its progress, so a regression that redelivers a poison message forever fails instead of
 * hanging, and a busy machine does not fail a scenario that is only slow.
 */
import { describe, expect, it } from 'vitest';
import { runBounded, type BoundedOutcome } from './support/run-bounded.ts';
import type * as Scenarios from './fixtures/reliability-scenarios.ts';

const SCENARIOS = new URL('./fixtures/reliability-scenarios.ts', import.meta.url).href;
/**
 * A scenario that makes no store call for 20 s hangs; one that makes more than 5,000 loops (the
 * largest, 30 concurrent drains, makes 584); a slow machine only makes a scenario slower.
 */
const BOUND = { idleMs: 20_000, maxSteps: 5_000 };
/**
 * Vitest's own bound per scenario: far above the load bound (2 min) and the idle bound, so that only
 * the bound above ends a slow scenario (on a loaded machine, loading the thread alone can take
 * longer than the default 30 s).
 */
const SCENARIO_TIMEOUT = { timeout: 600_000 };
const BACKENDS = ['memory', 'sqlite', 'postgres'] as const;

type Result<K extends keyof typeof Scenarios> = Awaited<ReturnType<(typeof Scenarios)[K]>>;

function describeOverrun(outcome: Exclude<BoundedOutcome<unknown>, { ok: true }>): string {
  if (outcome.reason === 'timeout') return `made no progress for ${BOUND.idleMs} ms (a hang?)`;
  if (outcome.reason === 'runaway') return `passed ${BOUND.maxSteps} store calls (${outcome.steps}; a loop?)`;
  return outcome.message;
}

async function run<K extends keyof typeof Scenarios>(name: K, input: Parameters<(typeof Scenarios)[K]>[0]): Promise<Result<K>> {
  const outcome = await runBounded<Result<K>>(SCENARIOS, name, input, BOUND);
  if (!outcome.ok) throw new Error(`${name} ${JSON.stringify(input)}: ${describeOverrun(outcome)}`);
  return outcome.value;
}

describe.each(BACKENDS)('failures of the model (%s)', SCENARIO_TIMEOUT, (backend) => {
  it('a 503 once is retried in-band: the run completes, the model is called twice, both DLQs stay empty', async () => {
    const result = await run('modelFailsOnce', { backend });
    expect(result.statuses).toEqual(['completed']);
    expect(result.modelCalls).toBe(3); // the failed call, its retry (step 0), step 1
    expect(result.charges).toBe(1);
    expect(result.dlq).toEqual({ message: [], tool: [] });
    expect(result.queueSize).toBe(0);
  });

  it('a rejected key dead-letters every run as a resumable model failure, opens the shared model breaker once, and spares the model afterwards', async () => {
    const result = await run('modelKeyRejected', { backend });
    expect(result.statuses).toEqual(['model_failed', 'model_failed', 'model_failed', 'model_failed']);
    // threshold 2: two runs find the key rejected, the other two are not sent to the provider
    expect(result.modelCalls).toBe(2);
    expect(result.reasons).toEqual(['model:model-not-retryable', 'model:model-not-retryable', 'model:model-breaker-open', 'model:model-breaker-open']);
    expect(result.breakerOpenEvents).toHaveLength(1);
    expect(result.breakerOpenEvents[0]).toMatchObject({ toolName: 'model:gpt-test', target: 'model', openings: 1 });
    expect(result.dlq.message).toEqual([]);
    expect(result.queueSize).toBe(0);
    for (const entry of result.dlq.tool) {
      expect(entry).toMatchObject({
        kind: 'model',
        modelName: 'gpt-test',
        stepIndex: 0,
        conversationRef: expect.stringMatching(/^conv_/),
        originalMessageId: expect.stringMatching(/^m\d$/),
      });
    }
    expect(result.dlq.tool[0]).toMatchObject({ attempts: 1, lastError: { kind: 'auth', status: 401 } });
    // the provider's error text carried the key: nowhere in the entries or the run records
    expect(JSON.stringify(result.dlq)).not.toContain('sk-proj-Q7hT2xLm9Vw4Kp8Zr3Nb6Yc1');
    expect(JSON.stringify(result.runRecords)).not.toContain('sk-proj-Q7hT2xLm9Vw4Kp8Zr3Nb6Yc1');
    expect(result.runRecords.every((record) => record?.status === 'model_failed')).toBe(true);
  });

  it('a model that stays down is dead-lettered after its attempts; a drain with the model back calls it only for the remaining step, once', async () => {
    const result = await run('modelAlwaysDownThenDrained', { backend });
    expect(result.statuses).toEqual(['model_failed']);
    expect(result.callsBefore).toBe(4); // step 0, then 3 attempts at step 1
    expect(result.before.tool).toEqual([
      expect.objectContaining({
        kind: 'model',
        reason: 'model-retries-exhausted',
        stepIndex: 1,
        attempts: 3,
        lastError: expect.objectContaining({ status: 503, kind: 'server' }),
        tokensSpent: { input: 10, output: 2 },
      }),
    ]);
    expect(result.callsInDrain).toBe(1);
    expect(result.charges).toBe(1);
    expect(result.drain).toEqual({ completed: 1 });
    expect(result.removed).toBe(1);
    expect(result.second).toEqual({});
    expect(result.after).toEqual({ message: [], tool: [] });
    expect(result.run?.status).toBe('completed');
  });

  it('a model that answers garbage (undefined, a string, bad tool calls) ends in the tool DLQ; the message behind it runs', async () => {
    const result = await run('modelReturnsGarbage', { backend });
    expect(result.statuses).toEqual(['poison:model_failed', 'next:completed']);
    expect(result.garbageCalls).toBe(3);
    expect(result.dlq.tool).toEqual([
      expect.objectContaining({ kind: 'model', reason: 'model-invalid-response', lastError: expect.objectContaining({ kind: 'invalid_response' }) }),
    ]);
    expect(result.charges).toBe(1);
    expect(result.queueSize).toBe(0);
  });
});

describe.each(BACKENDS)('poison messages (%s)', SCENARIO_TIMEOUT, (backend) => {
  it('a run the store rejects every time is delivered maxDeliveries times, then dead-lettered resumable; the side effect ran once; the next message runs', async () => {
    const result = await run('poisonRun', { backend });
    expect(result.rejectedPuts).toBe(5);
    expect(result.charges).toBe(1);
    // one scripted model serves both runs: the poison run's step 0 (its redeliveries resume from the ledger), then the next run's answer
    expect(result.modelCalls).toBe(2);
    // the poison message waits out its redelivery backoff while the next message runs
    expect(result.statuses).toEqual(['next:completed', 'poison:delivery_limit_exceeded']);
    expect(result.failedEvents).toEqual([1, 2, 3, 4].map((deliveries) => ({ deliveries, counted: true })));
    expect(result.limitEvents).toEqual([expect.objectContaining({ messageId: 'poison', runId: 'run_poison', deliveries: 5, queue: 'tool' })]);
    expect(result.dlq.message).toEqual([]);
    expect(result.dlq.tool).toEqual([
      expect.objectContaining({
        kind: 'run',
        runId: 'run_poison',
        reason: 'delivery-limit-exceeded',
        deliveries: 5,
        originalMessageId: 'poison',
        lastError: expect.objectContaining({ message: expect.stringContaining('rejects') }),
      }),
    ]);
    expect(result.queueSize).toBe(0);
  });

  it('the bound is configurable', async () => {
    const result = await run('poisonRun', { backend, maxDeliveries: 2 });
    expect(result.rejectedPuts).toBe(2);
    expect(result.dlq.tool).toEqual([expect.objectContaining({ kind: 'run', deliveries: 2 })]);
  });

  it('a message whose run never started goes to the message DLQ with its raw body and last error; the model is never called', async () => {
    const result = await run('poisonBeforeTheRun', { backend });
    expect(result.modelCalls).toBe(0);
    expect(result.statuses).toEqual(['delivery_limit_exceeded']);
    expect(result.dlq.tool).toEqual([]);
    expect(result.dlq.message).toEqual([
      expect.objectContaining({
        kind: 'message',
        rawBody: JSON.stringify({ input: 'charge me' }),
        rawBodyRedacted: false,
        reason: expect.objectContaining({ code: 'DELIVERY_LIMIT_EXCEEDED', deliveries: 5, detail: expect.stringContaining('BigInt') }),
      }),
    ]);
    expect(result.queueSize).toBe(0);
  });

  it('a store outage does not count toward the bound: the message completes once the store is back', async () => {
    const result = await run('storeOutageIsNotPoison', { backend });
    expect(result.statuses).toEqual(['completed']);
    expect(result.failed.length).toBeGreaterThanOrEqual(5);
    expect(result.failed.every((counted) => counted === false)).toBe(true);
    expect(result.dlq).toEqual({ message: [], tool: [] });
    expect(result.charges).toBe(1);
  });

  it('a message delivered past the bound (its consumers crashed) is dead-lettered without calling the model', async () => {
    const result = await run('crashedTooOften', { backend });
    expect(result.modelCalls).toBe(0);
    expect(result.result).toMatchObject({ status: 'delivery_limit_exceeded', queue: 'message', deliveries: 5 });
    expect(result.dlq.message).toEqual([
      expect.objectContaining({ reason: expect.objectContaining({ code: 'DELIVERY_LIMIT_EXCEEDED', detail: expect.stringContaining('without a result') }) }),
    ]);
    expect(result.events).toMatchObject({ 'delivery-limit-exceeded': 1, 'dead-letter-add': 1 });
  });
});

describe.each(BACKENDS)('two consumers of one DLQ entry (%s)', SCENARIO_TIMEOUT, (backend) => {
  it('two drains at once over 30 entries replay each once: 30 executions, 30 model calls, nothing left', async () => {
    const result = await run('concurrentDrains', { backend, count: 30 });
    expect(result.seeded).toBe(30);
    expect(result.chargesAfter).toBe(result.chargesBefore);
    expect(result.lookupsInDrains).toBe(30);
    expect(result.modelCallsInDrains).toBe(30);
    expect((result.first.completed ?? 0) + (result.second.completed ?? 0)).toBe(30);
    const losers =
      (result.first.in_progress ?? 0) + (result.second.in_progress ?? 0) + (result.first.already_completed ?? 0) + (result.second.already_completed ?? 0);
    expect((result.first.completed ?? 0) + (result.second.completed ?? 0) + losers).toBe(60);
    expect(result.removed).toBe(30);
    expect(result.left).toBe(0);
    expect(result.completedRuns).toBe(30);
  });

  it('two replays of one entry at once: one runs, the other says in_progress; a worker delivery meanwhile finds the run busy', async () => {
    const result = await run('concurrentReplays', { backend });
    expect(result.first).toBe('completed');
    expect(result.second).toBe('in_progress');
    expect(result.secondHolder).toMatch(/^replay:/);
    expect(result.delivery).toBe('busy');
    expect(result.third).toBe('already_completed');
    expect(result.lookups).toBe(1);
    expect(result.charges).toBe(1);
  });
});

describe.each(BACKENDS)('no silent drops (%s)', SCENARIO_TIMEOUT, (backend) => {
  it('a redelivered message raises message-duplicate; a second message reusing a run id goes to the message DLQ', async () => {
    const result = await run('duplicatesAreNotSilent', { backend });
    expect(result.statuses).toEqual(['completed', 'completed', 'rejected']);
    expect(result.charges).toBe(1);
    expect(result.modelCalls).toBe(2);
    expect(result.events).toContain('message-duplicate');
    expect(result.dlq.message).toEqual([expect.objectContaining({ messageId: 'b', reason: expect.objectContaining({ code: 'RUN_ID_CONFLICT' }) })]);
  });
});
