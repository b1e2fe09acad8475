import { describe, expect, it } from 'vitest';
import { createToolRuntime } from '../../core/create-tool-runtime.ts';
import { defineTool } from '../../core/define-tool.ts';
import { ToolError } from '../../core/tool-error.ts';
import { createAutoAdvancingClock } from '../../testing/auto-advancing-clock.ts';
import { runtimeInRestate } from './journaled-runtime.ts';
import type { RestateStepContext } from './restate-steps.ts';

/** One journaled command: a step's JSON result or a timer. */
type Entry = { kind: 'run'; name: string; value: unknown } | { kind: 'sleep'; ms: number };

/**
 * A Restate context in memory, as the SDK behaves: while `journal` has entries, a command returns
 * the journaled value without running (a replayed invocation); past its end, it runs and appends.
 */
function journaledContext(journal: Entry[] = []): RestateStepContext & { journal: Entry[]; live: string[] } {
  let index = 0;
  const live: string[] = [];
  return {
    journal,
    live,
    rand: { random: () => 0.5 },
    async run<T>(name: string, action: () => Promise<T>): Promise<T> {
      const entry = journal[index++];
      if (entry !== undefined) {
        if (entry.kind !== 'run' || entry.name !== name) throw new Error(`journal mismatch at ${index - 1}: ${name}`);
        return entry.value as T;
      }
      live.push(name);
      const value = JSON.parse(JSON.stringify(await action())) as T;
      journal.push({ kind: 'run', name, value });
      return value;
    },
    async sleep(ms: number): Promise<void> {
      const entry = journal[index++];
      if (entry !== undefined) {
        if (entry.kind !== 'sleep') throw new Error(`journal mismatch at ${index - 1}: sleep`);
        return;
      }
      live.push(`sleep ${ms}`);
      journal.push({ kind: 'sleep', ms });
    },
  };
}

const input = { type: 'object', properties: { order: { type: 'string' } }, required: ['order'], additionalProperties: false } as const;

function rateLimitedOnce(calls: { count: number }) {
  return defineTool({
    name: 'save_order',
    description: 'Saves an order',
    inputSchema: input,
    idempotent: true,
    execute: async ({ order }) => {
      calls.count += 1;
      if (calls.count === 1) throw new ToolError({ kind: 'rate_limit', status: 429, retryAfterMs: 5_000 });
      return { saved: order };
    },
  });
}

describe('runtimeInRestate', () => {
  it('a server wait longer than the call budget is a durable timer, then the next execution', async () => {
    const calls = { count: 0 };
    const runtime = createToolRuntime({ tools: [rateLimitedOnce(calls)], clock: createAutoAdvancingClock(), callBudgetMs: 1_000 });
    const context = journaledContext();
    const record = await runtimeInRestate(context, runtime).execute({ name: 'save_order', args: { order: 'O-1' }, runId: 'r1', maxAttempts: 3 });
    expect(record.result).toMatchObject({ status: 'success', attempts: 2, data: { saved: 'O-1' } });
    expect(context.live).toEqual(['toolrun.tool', 'sleep 5000', 'toolrun.tool']);
    expect(calls.count).toBe(2);
  });

  it('a replayed invocation reads every execution from the journal and waits no more', async () => {
    const calls = { count: 0 };
    const runtime = createToolRuntime({ tools: [rateLimitedOnce(calls)], clock: createAutoAdvancingClock(), callBudgetMs: 1_000 });
    const first = journaledContext();
    const original = await runtimeInRestate(first, runtime).execute({ name: 'save_order', args: { order: 'O-1' }, runId: 'r1', maxAttempts: 3 });
    const replay = journaledContext([...first.journal]);
    const replayed = await runtimeInRestate(replay, runtime).execute({ name: 'save_order', args: { order: 'O-1' }, runId: 'r1', maxAttempts: 3 });
    expect(replay.live).toEqual([]);
    expect(calls.count).toBe(2);
    expect(replayed.result).toEqual(original.result);
  });

  it('invalid arguments are the step result: not executed, not retried, no wait', async () => {
    const calls = { count: 0 };
    const runtime = createToolRuntime({ tools: [rateLimitedOnce(calls)], clock: createAutoAdvancingClock() });
    const context = journaledContext();
    const record = await runtimeInRestate(context, runtime).execute({ name: 'save_order', args: { order: 5 }, runId: 'r2', maxAttempts: 3 });
    expect(record.result).toMatchObject({ status: 'failed', error: { type: 'invalid_parameter' } });
    expect(context.live).toEqual(['toolrun.tool']);
    expect(calls.count).toBe(0);
  });

  it('the session breaker the loop reads answers from the journal, also in a replayed invocation', async () => {
    const forbidden = defineTool({
      name: 'delete_order',
      description: 'Refused for this session',
      inputSchema: input,
      execute: async () => {
        throw new ToolError({ kind: 'forbidden', status: 403 });
      },
    });
    const runtime = createToolRuntime({ tools: [forbidden], clock: createAutoAdvancingClock(), sessionBreaker: { failureThreshold: 1 } });
    const context = journaledContext();
    const journaled = runtimeInRestate(context, runtime);
    expect(journaled.sessionBreakers?.check('s2', 'delete_order').state).toBe('closed');
    await journaled.execute({ name: 'delete_order', args: { order: 'O-1' }, runId: 'r2', sessionId: 's2', maxAttempts: 3 });
    expect(journaled.sessionBreakers?.check('s2', 'delete_order').state).toBe('open');
    // a replayed invocation in a new process: the runtime's breakers are empty, the journal holds the state
    runtime.sessionBreakers?.reset();
    const replayed = runtimeInRestate(journaledContext([...context.journal]), runtime);
    await replayed.execute({ name: 'delete_order', args: { order: 'O-1' }, runId: 'r2', sessionId: 's2', maxAttempts: 3 });
    expect(replayed.sessionBreakers?.check('s2', 'delete_order').state).toBe('open');
  });

  it('a transient failure that spends the attempts in-band is returned with them all, no engine wait', async () => {
    const runtime = createToolRuntime({
      tools: [
        defineTool({
          name: 'down',
          description: 'Always down',
          inputSchema: input,
          idempotent: true,
          execute: async () => {
            throw new ToolError({ kind: 'server', status: 503 });
          },
        }),
      ],
      clock: createAutoAdvancingClock(),
    });
    const context = journaledContext();
    const record = await runtimeInRestate(context, runtime).execute({ name: 'down', args: { order: 'O-1' }, runId: 'r3', maxAttempts: 3 });
    expect(record.result).toMatchObject({ status: 'failed', attempts: 3, error: { code: 'UNAVAILABLE' } });
    expect(context.live).toEqual(['toolrun.tool']);
  });
});
