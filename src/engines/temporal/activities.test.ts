/**
 * The Temporal activity wrapper, run in Temporal's own MockActivityEnvironment (offline: no server),
 * with real toolrun runtimes and stores. Temporal's retries are played by running the activity again
 * with the next `attempt`, as the server would schedule it.
 */
import { ApplicationFailure, CancelledFailure, defaultFailureConverter, defaultPayloadConverter, type ProtoFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { createToolRuntime, type ToolRuntime } from '../../core/create-tool-runtime.ts';
import { defineTool, type ToolDefinition } from '../../core/define-tool.ts';
import { ToolError } from '../../core/tool-error.ts';
import type { ToolFailureEntry } from '../../ground/dead-letter-entries.ts';
import type { Clock } from '../../ground/ports/clock.ts';
import { systemClock } from '../../ground/ports/clock.ts';
import type { Stores } from '../../ground/ports/stores.ts';
import { createSharedBreaker } from '../../policies/shared-breaker.ts';
import { createMemoryStores } from '../../stores/memory/memory-stores.ts';
import { createAutoAdvancingClock } from '../../testing/auto-advancing-clock.ts';
import { hostOfEntry } from '../../worker/host-entry.ts';
import { createToolrunActivities, TEMPORAL_HOST } from './activities.ts';
import {
  TOOLRUN_DEAD_LETTER_FAILURE_TYPE,
  TOOLRUN_RETRY_FAILURE_TYPE,
  type TemporalDeadLetterResult,
  type TemporalToolCall,
  type TemporalToolFailureDetails,
} from './failure-types.ts';
import { readToolFailureDetails } from './workflow.ts';

const START_MS = Date.UTC(2026, 0, 1);

interface Setup {
  runtime: ToolRuntime;
  stores: Stores;
  calls: Map<string, number>;
  keys: string[];
}

/** A runtime whose tools count their executions and keep the idempotency keys they were given. */
function setup(extraTools: ToolDefinition[] = [], clock: Clock = createAutoAdvancingClock(START_MS)): Setup {
  const stores = createMemoryStores({ clock });
  const calls = new Map<string, number>();
  const keys: string[] = [];
  const counted = (name: string, execute: (attempt: number) => unknown, extra: Partial<ToolDefinition> = {}) =>
    defineTool({
      name,
      description: name,
      inputSchema: { type: 'object' },
      ...extra,
      execute: (_args, context) => {
        const count = (calls.get(name) ?? 0) + 1;
        calls.set(name, count);
        keys.push(context.idempotencyKey);
        return execute(count);
      },
    });
  const tools = [
    defineTool({
      name: 'search_flights',
      description: 'Flights on a date',
      inputSchema: { type: 'object', properties: { date: { type: 'string', format: 'date' } }, required: ['date'], additionalProperties: false },
      idempotent: true,
      execute: ({ date }) => ({ date, flights: ['LH 400'] }),
    }),
    counted(
      'flaky_search',
      (count) => {
        if (count < 3) throw new ToolError({ kind: 'server', status: 503, message: 'search is down' });
        return { flights: ['LH 400'] };
      },
      { idempotent: true },
    ),
    counted(
      'down_search',
      () => {
        throw new ToolError({ kind: 'server', status: 503, message: 'search is down' });
      },
      { idempotent: true, sensitive: ['card'] },
    ),
    counted(
      'limited_search',
      () => {
        throw new ToolError({ kind: 'rate_limit', status: 429, headers: { 'retry-after': '120' } });
      },
      { idempotent: true },
    ),
    counted('crm', () => {
      throw new ToolError({ kind: 'auth', status: 401, message: 'API key rejected' });
    }),
    counted('book_seat', () => ({ seat: '12A' })),
    ...extraTools,
  ];
  const sharedBreaker = createSharedBreaker({ store: stores.breakers, clock, options: { failureThreshold: 1 } });
  const runtime = createToolRuntime({ tools, clock, sharedBreaker, random: () => 0 });
  return { runtime, stores, calls, keys };
}

/** Runs `toolrunCallTool` as Temporal attempt `attempt` of the activity of workflow `workflowId`. */
function runActivity(s: Setup, call: TemporalToolCall, info: { attempt?: number; workflowId?: string } = {}, recordOutcomes = false) {
  const activities = createToolrunActivities({
    runtime: s.runtime,
    stores: { toolDlq: s.stores.toolDlq, journal: s.stores.journal },
    recordOutcomes,
    backoff: { random: () => 0 },
  });
  const environment = new MockActivityEnvironment({
    attempt: info.attempt ?? 1,
    workflowExecution: { workflowId: info.workflowId ?? 'wf-booking-1', runId: 'run-uuid-1' },
  });
  return environment.run(activities.toolrunCallTool, call);
}

/** The thrown ApplicationFailure, as the worker would report it to the server and the workflow would decode it. */
function roundTrip(error: unknown): { proto: ProtoFailure; decoded: Error } {
  const proto = defaultFailureConverter.errorToFailure(error, defaultPayloadConverter);
  return { proto, decoded: defaultFailureConverter.failureToError(proto, defaultPayloadConverter) };
}

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ApplicationFailure);
  return error as ApplicationFailure;
}

describe('toolrunCallTool: return-to-model', () => {
  it('invalid arguments: the activity completes with the envelope (no retry), the tool never ran', async () => {
    const s = setup();
    const result = await runActivity(s, { stepIndex: 1, name: 'search_flights', args: { date: '2026/1/5' } });
    expect(result).toMatchObject({ status: 'failed', attempts: 0, error: { type: 'invalid_parameter', code: 'DATE_FORMAT_ERROR', retryable: true } });
  });

  it('an unknown tool: the envelope with the closest name', async () => {
    const result = await runActivity(setup(), { stepIndex: 1, name: 'search_flight', args: { date: '2026-01-05' } });
    expect(result).toMatchObject({ status: 'failed', error: { code: 'TOOL_NOT_FOUND', closest_tool: 'search_flights' } });
  });

  it('a success, with the idempotency key <workflowId>:<step>:<call> stable across Temporal attempts', async () => {
    const s = setup();
    const call = { stepIndex: 2, callIndex: 1, name: 'book_seat', args: {} };
    expect(await runActivity(s, call)).toMatchObject({ status: 'success', data: { seat: '12A' } });
    expect(await runActivity(s, call, { attempt: 2 })).toMatchObject({ status: 'success' });
    expect(s.keys).toEqual(['wf-booking-1:2:1', 'wf-booking-1:2:1']);
  });

  it('with the ledger, an attempt after the outcome was recorded returns it without running the tool again', async () => {
    const s = setup();
    const call = { stepIndex: 2, name: 'book_seat', args: {} };
    const first = await runActivity(s, call, {}, true);
    // the worker died after the tool ran and before Temporal heard of it: Temporal runs the activity again
    const again = await runActivity(s, call, { attempt: 2 }, true);
    expect(again).toEqual(first);
    expect(s.calls.get('book_seat')).toBe(1);
    expect(await s.stores.ledger.get('wf-booking-1:2:0')).toEqual(first);
  });
});

describe('toolrunCallTool: retry through Temporal', () => {
  it('a 503: a retryable ApplicationFailure with nextRetryDelay = toolrun backoff; the 3rd attempt succeeds', async () => {
    const s = setup();
    const call = { stepIndex: 1, name: 'flaky_search', args: {} };
    const first = await failureOf(runActivity(s, call, { attempt: 1 }));
    expect(first).toMatchObject({ type: TOOLRUN_RETRY_FAILURE_TYPE, nonRetryable: false, nextRetryDelay: 500 });
    const second = await failureOf(runActivity(s, call, { attempt: 2 }));
    expect(second.nextRetryDelay).toBe(1000);
    expect(await runActivity(s, call, { attempt: 3 })).toMatchObject({ status: 'success', attempts: 1 });
    // the runtime never retried in-process: one execution per Temporal attempt
    expect(s.calls.get('flaky_search')).toBe(3);
  });

  it("a 429 with Retry-After: 120: Temporal waits the server's 120 s (nextRetryDelay on the wire)", async () => {
    const s = setup();
    const failure = await failureOf(runActivity(s, { stepIndex: 1, name: 'limited_search', args: {} }));
    expect(failure.nextRetryDelay).toBe(120_000);
    const { proto } = roundTrip(failure);
    expect(proto.applicationFailureInfo).toMatchObject({ type: TOOLRUN_RETRY_FAILURE_TYPE, nonRetryable: false });
    expect(Number(proto.applicationFailureInfo?.nextRetryDelay?.seconds)).toBe(120);
  });
});

describe('toolrunCallTool: dead-letter', () => {
  it('the retry budget spent (3rd attempt, budget 2): non-retryable, details redacted, read back by the workflow side', async () => {
    const s = setup();
    const failure = await failureOf(
      runActivity(s, { stepIndex: 3, name: 'down_search', args: { card: '4111 1111 1111 1111', email: 'ada@example.com' } }, { attempt: 3 }),
    );
    expect(failure).toMatchObject({ type: TOOLRUN_DEAD_LETTER_FAILURE_TYPE, nonRetryable: true });
    const { proto, decoded } = roundTrip(failure);
    expect(proto.applicationFailureInfo?.nonRetryable).toBe(true);
    expect(JSON.stringify(proto)).not.toContain('4111');
    const details = readToolFailureDetails(decoded);
    expect(details).toMatchObject({
      reason: 'retry-budget-exhausted',
      toolName: 'down_search',
      attempts: 3,
      lastError: { kind: 'server', status: 503 },
      envelope: { status: 'failed', error: { code: 'UNAVAILABLE' } },
    });
    expect(JSON.stringify(details)).not.toMatch(/4111|ada@example\.com/);
  });

  it('a rejected credential: dead-lettered at once (misconfiguration), and the next workflow meets the open shared breaker without calling the tool', async () => {
    const s = setup();
    const first = await failureOf(runActivity(s, { stepIndex: 0, name: 'crm', args: {} }, { workflowId: 'wf-a' }));
    expect(readToolFailureDetails(roundTrip(first).decoded)?.reason).toBe('misconfiguration');
    const second = await failureOf(runActivity(s, { stepIndex: 0, name: 'crm', args: {} }, { workflowId: 'wf-b' }));
    expect(second.nonRetryable).toBe(true);
    expect(readToolFailureDetails(roundTrip(second).decoded)?.reason).toBe('circuit-open');
    expect(s.calls.get('crm')).toBe(1);
  });

  it('a retry failure Temporal gave up on (its own maximumAttempts) reads as retry-budget-exhausted', async () => {
    const failure = await failureOf(runActivity(setup(), { stepIndex: 1, name: 'down_search', args: {} }));
    expect(readToolFailureDetails(roundTrip(failure).decoded)?.reason).toBe('retry-budget-exhausted');
    expect(readToolFailureDetails(new Error('activity timed out'))).toBeUndefined();
  });
});

describe('toolrunCallTool: cancellation', () => {
  it("Temporal cancels the activity: the tool's signal aborts and the cancellation is rethrown, not returned as an outcome", async () => {
    let aborted = false;
    const hang = defineTool({
      name: 'slow_report',
      description: 'waits until cancelled',
      inputSchema: { type: 'object' },
      idempotent: true,
      execute: (_args, context) =>
        new Promise((_, reject) =>
          context.signal.addEventListener('abort', () => {
            aborted = true;
            reject(context.signal.reason as Error);
          }),
        ),
    });
    // the real clock: the tool's 30 s timeout must not fire before the cancellation
    const s = setup([hang], systemClock);
    // outcomes recorded: a cancellation recorded as the call's outcome would show in the ledger below
    const activities = createToolrunActivities({ runtime: s.runtime, stores: { ...s.stores }, recordOutcomes: true });
    const environment = new MockActivityEnvironment({ workflowExecution: { workflowId: 'wf-c', runId: 'r' } });
    const pending = environment.run(activities.toolrunCallTool, { stepIndex: 0, name: 'slow_report', args: {} });
    setTimeout(() => environment.cancel(), 20);
    const error = await pending.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(CancelledFailure);
    expect(aborted).toBe(true);
    expect(await s.stores.ledger.get('wf-c:0:0')).toBeUndefined();
  });
});

describe('toolrunDeadLetter', () => {
  it('one entry per (workflow, step) with the workflow id as its pointer; a retried activity adds none', async () => {
    const s = setup();
    const failure = await failureOf(runActivity(s, { stepIndex: 3, name: 'down_search', args: { card: '4111 1111 1111 1111' } }, { attempt: 3 }));
    const details = readToolFailureDetails(roundTrip(failure).decoded) as TemporalToolFailureDetails;
    const activities = createToolrunActivities({ runtime: s.runtime, stores: s.stores });
    const input = {
      workflowId: 'wf-booking-1',
      stepIndex: 3,
      details,
      conversationRef: 'conv_0123456789abcdef0123456789abcdef',
      messages: [{ role: 'user', content: 'find me a flight' }],
      tokensSpent: { input: 120, output: 30 },
      firstSeenAt: '2026-01-01T00:00:00.000Z',
    };
    const environment = new MockActivityEnvironment();
    // (MockActivityEnvironment.run cannot infer the result type from the function)
    const first = (await environment.run(activities.toolrunDeadLetter, input)) as TemporalDeadLetterResult;
    const again = (await environment.run(activities.toolrunDeadLetter, input)) as TemporalDeadLetterResult;
    expect(first.added).toBe(true);
    expect(again).toEqual({ id: first.id, added: false });
    const records = await s.stores.toolDlq.list();
    expect(records).toHaveLength(1);
    const entry = records[0]!.entry as ToolFailureEntry;
    expect(entry).toMatchObject({
      kind: 'tool',
      runId: 'wf-booking-1',
      stepIndex: 3,
      toolName: 'down_search',
      attempts: 3,
      reason: 'retry-budget-exhausted',
      conversationRef: input.conversationRef,
      tokensSpent: { input: 120, output: 30 },
      originalMessageId: 'temporal:wf-booking-1',
    });
    expect(hostOfEntry(entry)).toBe(TEMPORAL_HOST);
    expect(JSON.stringify(entry)).not.toContain('4111');
    expect(await s.stores.conversations.get(input.conversationRef)).toEqual(input.messages);
  });

  it('a conversationRef that is not conv_…: a non-retryable failure (a retry cannot fix it), nothing written', async () => {
    const s = setup();
    const activities = createToolrunActivities({ runtime: s.runtime, stores: s.stores });
    const failure = await failureOf(
      new MockActivityEnvironment().run(activities.toolrunDeadLetter, {
        workflowId: 'wf',
        stepIndex: 0,
        details: {} as TemporalToolFailureDetails,
        conversationRef: 'messages',
        messages: [],
        tokensSpent: { input: 0, output: 0 },
        firstSeenAt: '2026-01-01T00:00:00.000Z',
      }),
    );
    expect(failure.nonRetryable).toBe(true);
    expect(await s.stores.toolDlq.list()).toEqual([]);
  });
});

describe('createToolrunActivities: options', () => {
  it('stores without a journal, or a recordOutcomes that is not a boolean: INVALID_OPTIONS', () => {
    const s = setup();
    const missing = { runtime: s.runtime, stores: { toolDlq: s.stores.toolDlq } } as unknown as Parameters<typeof createToolrunActivities>[0];
    expect(() => createToolrunActivities(missing)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    const flag = { runtime: s.runtime, stores: s.stores, recordOutcomes: 'yes' } as unknown as Parameters<typeof createToolrunActivities>[0];
    expect(() => createToolrunActivities(flag)).toThrow(/recordOutcomes must be a boolean/);
  });
});
