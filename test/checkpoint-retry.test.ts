/**
 * A checkpoint write that fails on a store outage is sent again (with backoff, on the injected
 * clock) before the run gives up: the tool that ran is not run again by a redelivery, and a write
 * that reached the store before the error leaves the same state once written again.
 */
import { describe, expect, it } from 'vitest';
import {
  createStoreJournal,
  createToolRuntime,
  createWorker,
  defineTool,
  runAgent,
  ToolrunError,
  type AgentRunResult,
  type RunJournal,
  type Stores,
} from '../src/index.ts';
import { createMemoryStores } from '../src/stores/memory/memory-stores.ts';
import { createFakeClock, type FakeClock } from '../src/testing/fake-clock.ts';
import { createScriptedModel } from '../src/testing/scripted-model.ts';

/** What PostgreSQL's driver throws when the server goes away mid-statement. */
const outage = () => Object.assign(new Error('Connection terminated unexpectedly'), { code: '08006' });

function agent(clock: FakeClock) {
  const effects: string[] = [];
  const charge = defineTool({
    name: 'charge',
    description: 'Charges a card (a side effect).',
    inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'], additionalProperties: false },
    execute: async (args) => {
      const amount = args.amount as number;
      effects.push(`charged ${amount}`);
      return { charged: amount };
    },
  });
  const runtime = createToolRuntime({ tools: [charge], clock });
  const model = createScriptedModel([
    { toolCalls: [{ id: 'c1', name: 'charge', args: { amount: 5 } }], usage: { input: 1, output: 1 } },
    { text: 'done', usage: { input: 1, output: 1 } },
  ]);
  return { effects, runtime, model };
}

/** Runs `work` to its end, moving the fake clock 100 ms at a time while it waits. */
async function drive<T>(clock: FakeClock, work: Promise<T>): Promise<T> {
  let settled = false;
  const done = work.finally(() => (settled = true));
  done.catch(() => undefined);
  for (let turn = 0; !settled && turn < 10_000; turn++) await clock.advance(100);
  return done;
}

/** The journal of `stores` whose step commits (`commit`, `finish`) fail as `failures` says, counted. */
function failingCommits(stores: Stores, failures: (attempt: number, commit: () => Promise<void>) => Promise<void>) {
  const inner = stores.journal;
  const counted = { attempts: 0 };
  const counting = (write: () => Promise<void>) => {
    counted.attempts += 1;
    return failures(counted.attempts, write);
  };
  const journal: RunJournal = {
    ...inner,
    commit: (step) => counting(() => inner.commit(step)),
    finish: (step, holder) => counting(() => inner.finish(step, holder)),
  };
  return { journal, counted };
}

describe('checkpoint writes during a store outage', () => {
  it('sends the step commit again after an outage, with backoff on the clock: the tool ran once and its outcome is recorded', async () => {
    const clock = createFakeClock();
    const stores = createMemoryStores({ clock });
    const { effects, runtime, model } = agent(clock);
    // the commit after the tool call (the 3rd) fails twice
    const { journal, counted } = failingCommits(stores, async (attempt, commit) => {
      if (attempt === 3 || attempt === 4) throw outage();
      return commit();
    });
    const startedAt = clock.now();
    const result = await drive(
      clock,
      runAgent({
        model,
        runtime,
        runId: 'run_1',
        messages: [{ role: 'user', content: 'pay' }],
        persistence: { journal },
      }),
    );
    expect(result.status).toBe('completed');
    expect(effects).toEqual(['charged 5']);
    expect(counted.attempts).toBe(6);
    expect(await stores.ledger.get('run_1:0:0')).toMatchObject({ status: 'success', data: { charged: 5 } });
    expect(await stores.runs.get('run_1')).toMatchObject({ status: 'completed' });
    // waits of 100 and 200 ms (+ jitter below 50 each), moved 100 ms at a time
    expect(clock.now() - startedAt).toBeGreaterThanOrEqual(300);
    expect(clock.now() - startedAt).toBeLessThanOrEqual(500);
  });

  it('leaves the same state when a commit that reached the store is reported failed and sent again', async () => {
    const clock = createFakeClock();
    const stores = createMemoryStores({ clock });
    const { effects, runtime, model } = agent(clock);
    // every commit is written, and the first report of each is lost
    let reported = 0;
    const { journal } = failingCommits(stores, async (attempt, commit) => {
      const committed = await commit();
      if (attempt % 2 === 1) throw outage();
      reported += 1;
      return committed;
    });
    const result: AgentRunResult = await drive(
      clock,
      runAgent({
        model,
        runtime,
        runId: 'run_2',
        messages: [{ role: 'user', content: 'pay' }],
        persistence: { journal },
      }),
    );
    expect(result.status).toBe('completed');
    expect(reported).toBe(4);
    expect(effects).toEqual(['charged 5']);
    const stored = await stores.conversations.get(result.conversationRef);
    expect(stored).toEqual(result.messages);
    expect(stored?.map((message) => (message as { role: string }).role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('throws at once on an error that is not an outage, and after maxAttempts on an outage that lasts', async () => {
    for (const [error, attempts] of [
      [new Error('conversation refused: holds \\u0000'), 1],
      [outage(), 3],
    ] as const) {
      const clock = createFakeClock();
      const stores = createMemoryStores({ clock });
      const { effects, runtime, model } = agent(clock);
      const { journal, counted } = failingCommits(stores, async (attempt, commit) => {
        if (attempt >= 3) throw error;
        return commit();
      });
      const run = runAgent({
        model,
        runtime,
        runId: 'run_3',
        messages: [{ role: 'user', content: 'pay' }],
        persistence: {
          journal,
          checkpointRetry: { maxAttempts: 3, baseDelayMs: 10, factor: 2, maxDelayMs: 1_000, jitterMs: 0 },
        },
      });
      await expect(drive(clock, run)).rejects.toBe(error);
      expect(counted.attempts).toBe(2 + attempts);
      expect(effects).toEqual(['charged 5']);
    }
  });

  it("when one call of a step gives up on a lasting outage, waits for the step's other calls and records what they did before the run throws", async () => {
    const clock = createFakeClock();
    const stores = createMemoryStores({ clock });
    const log: string[] = [];
    const quick = defineTool({
      name: 'quick',
      description: 'Answers at once.',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      execute: async () => {
        log.push('quick');
        return { done: 'quick' };
      },
    });
    const slow = defineTool({
      name: 'slow',
      description: 'Answers after 500 ms.',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      execute: async () => {
        log.push('slow begins');
        await clock.sleep(500);
        log.push('slow ends');
        return { done: 'slow' };
      },
    });
    const runtime = createToolRuntime({ tools: [quick, slow], clock });
    const turns = () =>
      createScriptedModel([
        {
          toolCalls: [
            { id: 'c1', name: 'quick', args: {} },
            { id: 'c2', name: 'slow', args: {} },
          ],
          usage: { input: 1, output: 1 },
        },
        { text: 'done', usage: { input: 1, output: 1 } },
      ]);
    // the ledger refuses quick's row for as long as the run retries it
    let down = true;
    const ledger = {
      ...stores.ledger,
      get: stores.ledger.get.bind(stores.ledger),
      delete: stores.ledger.delete.bind(stores.ledger),
      putIfAbsent: async (key: string, value: Parameters<typeof stores.ledger.putIfAbsent>[1]) => {
        if (down && key === 'run_4:0:0') throw outage();
        return stores.ledger.putIfAbsent(key, value);
      },
    };
    const persistence = {
      journal: createStoreJournal({ ...stores, ledger }),
      checkpointRetry: { maxAttempts: 2, baseDelayMs: 10, factor: 2, maxDelayMs: 100, jitterMs: 0 },
    };
    const first = runAgent({ model: turns(), runtime, runId: 'run_4', messages: [{ role: 'user', content: 'both' }], persistence });
    await expect(drive(clock, first)).rejects.toMatchObject({ code: '08006' });
    // the run threw only once slow was done, and slow's outcome is recorded
    expect(log).toEqual(['quick', 'slow begins', 'slow ends']);
    expect(await stores.ledger.get('run_4:0:1')).toMatchObject({ status: 'success', data: { done: 'slow' } });
    // the delivery after the outage runs only the call whose outcome was lost
    down = false;
    const second = await drive(
      clock,
      runAgent({
        model: createScriptedModel([{ text: 'done', usage: { input: 1, output: 1 } }]),
        runtime,
        runId: 'run_4',
        messages: [{ role: 'user', content: 'both' }],
        persistence,
      }),
    );
    expect(second.status).toBe('completed');
    expect(log).toEqual(['quick', 'slow begins', 'slow ends', 'quick']);
  });

  it("when the step commit after a tool call fails for good, records the call's outcome on its own: the next delivery does not run it again", async () => {
    for (const error of [Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' }), outage()]) {
      const clock = createFakeClock();
      const stores = createMemoryStores({ clock });
      const { effects, runtime, model } = agent(clock);
      let failing = true;
      // the commit after the tool call (the 3rd, and its retries) fails while `failing`
      const { journal } = failingCommits(stores, async (attempt, commit) => {
        if (failing && attempt >= 3) throw error;
        return commit();
      });
      const persistence = {
        journal,
        checkpointRetry: { maxAttempts: 2, baseDelayMs: 10, factor: 2, maxDelayMs: 100, jitterMs: 0 },
      };
      const messages = [{ role: 'user' as const, content: 'pay' }];
      await expect(drive(clock, runAgent({ model, runtime, runId: 'run_5', messages, persistence }))).rejects.toBe(error);
      expect(await stores.ledger.get('run_5:0:0')).toMatchObject({ status: 'success', data: { charged: 5 } });
      failing = false;
      const again = await drive(
        clock,
        runAgent({ model: createScriptedModel([{ text: 'done', usage: { input: 1, output: 1 } }]), runtime, runId: 'run_5', messages, persistence }),
      );
      expect(again.status).toBe('completed');
      expect(effects).toEqual(['charged 5']);
    }
  });

  it('refuses checkpointRetry options out of range with INVALID_OPTIONS naming the field', async () => {
    const clock = createFakeClock();
    const stores = createMemoryStores({ clock });
    const { runtime, model } = agent(clock);
    const valid = { maxAttempts: 3, baseDelayMs: 10, factor: 2, maxDelayMs: 100, jitterMs: 0 };
    for (const [field, value] of [
      ['maxAttempts', 0],
      ['maxAttempts', 1.5],
      ['baseDelayMs', -1],
      ['maxDelayMs', Number.NaN],
      ['jitterMs', Number.POSITIVE_INFINITY],
      ['factor', 0.5],
    ] as const) {
      const error = await runAgent({
        model,
        runtime,
        messages: [{ role: 'user', content: 'pay' }],
        persistence: { ...stores, checkpointRetry: { ...valid, [field]: value } },
      }).catch((thrown: unknown) => thrown);
      expect(ToolrunError.is(error) && error.code).toBe('INVALID_OPTIONS');
      expect((error as Error).message).toContain(`checkpointRetry.${field}`);
    }
    // a delay a timer cannot wait (it would fire at once), and a worker refuses a bad value at start-up, not at every delivery
    for (const checkpointRetry of [
      { ...valid, maxDelayMs: 2 ** 31 },
      { ...valid, maxAttempts: 0 },
    ]) {
      const error = (() => {
        try {
          createWorker({ model, tools: [], stores, checkpointRetry });
          return undefined;
        } catch (thrown) {
          return thrown;
        }
      })();
      expect(ToolrunError.is(error) && error.code).toBe('INVALID_OPTIONS');
    }
  });
});
