import { describe, expect, it } from 'vitest';
import { defineTool } from '../core/define-tool.ts';
import { ToolError } from '../core/tool-error.ts';
import type { ResumableEntry } from '../ground/dead-letter-entries.ts';
import type { DeadLetterQueue, Stores } from '../ground/ports/stores.ts';
import { createMemoryStores } from '../stores/memory/index.ts';
import { createFakeClock } from '../testing/fake-clock.ts';
import { createScriptedModel } from '../testing/scripted-model.ts';
import { createWorker } from './create-worker.ts';
import type { WorkerEvent } from './worker-events.ts';

const lookup = defineTool({ name: 'lookup', description: '', inputSchema: { type: 'object' }, execute: async () => ({ ok: true }) });
// a credential rejected: broken for everyone, so the run ends tool_failed at once (no retry, no wait)
const charge = defineTool({
  name: 'charge',
  description: '',
  inputSchema: { type: 'object' },
  execute: () => {
    throw new ToolError({ kind: 'auth', status: 401, message: 'API key rejected' });
  },
});

/** A model that calls `lookup` or `charge` (as the message's input says), then answers. */
function modelFor() {
  const scripts = new Map<string, ReturnType<typeof createScriptedModel>>();
  return (request: Parameters<ReturnType<typeof createScriptedModel>>[0]) => {
    const runId = request.runId ?? '';
    if (request.stepIndex === 0 || !scripts.has(runId)) {
      const first = request.messages.find((message) => message.role === 'user');
      const name = String(first?.content).includes('charge') ? 'charge' : 'lookup';
      scripts.set(
        runId,
        createScriptedModel([
          { toolCalls: [{ id: 'c1', name, args: '{}' }], usage: { input: 1, output: 1 } },
          { text: 'done', usage: { input: 1, output: 1 } },
        ]),
      );
    }
    return scripts.get(runId)!(request);
  };
}

/** The stores, with the tool DLQ's `size` calls counted. */
function countedStores(clock = createFakeClock()) {
  const stores = createMemoryStores({ clock });
  let sizeReads = 0;
  const toolDlq: DeadLetterQueue<ResumableEntry> = Object.assign(Object.create(stores.toolDlq) as DeadLetterQueue<ResumableEntry>, {
    size: () => {
      sizeReads += 1;
      return stores.toolDlq.size();
    },
  });
  const counted: Stores = { ...stores, toolDlq };
  return { clock, stores: counted, raw: stores, sizeReads: () => sizeReads };
}

describe('createWorker: the dead-letter bound', () => {
  it('stops taking messages once a DLQ holds maxDeadLetterEntries, with one dead-letter-full event, and leaves the rest queued', async () => {
    const { clock, stores } = countedStores();
    const events: WorkerEvent[] = [];
    const statuses: string[] = [];
    for (let index = 0; index < 5; index++) await stores.queue.enqueue({ id: `m${index}`, body: JSON.stringify({ input: 'charge the card' }) });
    const worker = createWorker({
      stores,
      clock,
      model: modelFor(),
      tools: [lookup, charge],
      maxDeadLetterEntries: 2,
      onEvent: (event) => events.push(event),
      onResult: (result) => statuses.push(result.status),
    });
    await worker.runUntilEmpty();
    expect(statuses).toEqual(['tool_failed', 'tool_failed']);
    expect(await stores.toolDlq.size()).toBe(2);
    expect(await stores.queue.size()).toBe(3);
    expect(events.filter((event) => event.type === 'dead-letter-full')).toEqual([expect.objectContaining({ queue: 'tool', size: 2, maxEntries: 2 })]);
    expect(worker.stats.paused).toBe(true);
  });

  it('reads the totals once while runs complete, again after each run that did not, and at least once a second for other processes', async () => {
    const { clock, stores, raw, sizeReads } = countedStores();
    const statuses: string[] = [];
    const worker = createWorker({
      stores,
      clock,
      model: modelFor(),
      tools: [lookup, charge],
      maxDeadLetterEntries: 3,
      onResult: (result) => statuses.push(result.status),
    });
    for (let index = 0; index < 10; index++) await stores.queue.enqueue({ id: `ok${index}`, body: JSON.stringify({ input: 'look it up' }) });
    await worker.runUntilEmpty();
    expect(statuses).toHaveLength(10);
    expect(new Set(statuses)).toEqual(new Set(['completed']));
    expect(sizeReads()).toBe(1);

    // a failed run may have dead-lettered: the next message is taken only after a fresh read
    await stores.queue.enqueue({ id: 'bad', body: JSON.stringify({ input: 'charge the card' }) });
    await stores.queue.enqueue({ id: 'ok-after', body: JSON.stringify({ input: 'look it up' }) });
    await worker.runUntilEmpty();
    expect(statuses.slice(10)).toEqual(['tool_failed', 'completed']);
    expect(sizeReads()).toBe(2); // only after the failed run: a completed one adds nothing

    // another process fills the tool DLQ: within the second the worker still takes messages; after it, it stops
    const entry = (await raw.toolDlq.list())[0]!.entry;
    await raw.toolDlq.push({ ...entry, runId: 'run_elsewhere_1' });
    await raw.toolDlq.push({ ...entry, runId: 'run_elsewhere_2' });
    for (let index = 0; index < 3; index++) await stores.queue.enqueue({ id: `late${index}`, body: JSON.stringify({ input: 'look it up' }) });
    await clock.advance(1_000);
    await worker.runUntilEmpty();
    expect(statuses).toHaveLength(12);
    expect(await stores.queue.size()).toBe(3);
    expect(worker.stats.paused).toBe(true);
  });
});
