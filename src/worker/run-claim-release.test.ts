import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent } from '../agent/run-agent.ts';
import { defineTool } from '../core/define-tool.ts';
import type { Stores } from '../ground/ports/stores.ts';
import { createMemoryStores } from '../stores/memory/index.ts';
import { createSqliteStores } from '../stores/sqlite/index.ts';
import { createAutoAdvancingClock } from '../testing/auto-advancing-clock.ts';
import { createScriptedModel } from '../testing/scripted-model.ts';
import { handleMessage } from './handle-message.ts';

const lookup = defineTool({
  name: 'lookup',
  description: '',
  inputSchema: { type: 'object', properties: { id: { type: 'string' } } },
  execute: ({ id }) => ({ id }),
});
const twoSteps = () =>
  createScriptedModel([
    { toolCalls: [{ id: 'c1', name: 'lookup', args: '{"id":"a"}' }], usage: { input: 10, output: 1 } },
    { text: 'done', usage: { input: 12, output: 1 } },
  ]);

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});
const sqliteStores = () => {
  const folder = mkdtempSync(join(tmpdir(), 'toolrun-claim-release-'));
  folders.push(folder);
  return createSqliteStores({ path: join(folder, 'stores.db') });
};

/**
 * Runs a 2-step run whose loop is handed the claim of `worker-1` (the claim itself is taken by
 * `takenBy` first); returns its status.
 */
async function runClaimed(stores: Stores, takenBy = 'worker-1'): Promise<string> {
  expect(await stores.claims.acquire('run:run_a', takenBy, 60_000)).toBe(true);
  const result = await runAgent({
    model: twoSteps(),
    tools: [lookup],
    messages: [{ role: 'user', content: 'go' }],
    runId: 'run_a',
    persistence: { journal: stores.journal, claimHolder: 'worker-1' },
  });
  return result.status;
}

describe("a run's last commit and its claim", () => {
  it('SQLite: the last commit ends the claim with the completed checkpoint', async () => {
    const stores = sqliteStores();
    try {
      expect(await runClaimed(stores)).toBe('completed');
      expect(await stores.claims.get('run:run_a')).toBeUndefined();
      expect((await stores.runs.get('run_a'))?.status).toBe('completed');
    } finally {
      await stores.close();
    }
  });

  it('memory (a journal composed from the stores): the last commit ends the claim too, once the checkpoint is written', async () => {
    const stores = createMemoryStores();
    expect(await runClaimed(stores)).toBe('completed');
    expect(await stores.claims.get('run:run_a')).toBeUndefined();
    expect((await stores.runs.get('run_a'))?.status).toBe('completed');
  });

  it('a claim taken over by another holder meanwhile is left to that holder', async () => {
    for (const stores of [sqliteStores(), createMemoryStores()] as Stores[]) {
      try {
        expect(await runClaimed(stores, 'drain-a')).toBe('completed');
        expect((await stores.claims.get('run:run_a'))?.holder).toBe('drain-a');
      } finally {
        await stores.close();
      }
    }
  });

  it('handleMessage on SQLite and on memory: no claim is left behind after a completed run', async () => {
    for (const stores of [sqliteStores(), createMemoryStores()] as Stores[]) {
      try {
        const result = await handleMessage(
          { body: JSON.stringify({ input: 'go' }), id: 'm1' },
          { model: twoSteps(), tools: [lookup], stores, runtimeOptions: { clock: createAutoAdvancingClock() } },
        );
        expect(result.status).toBe('completed');
        expect(await stores.claims.get('run:run_m1')).toBeUndefined();
      } finally {
        await stores.close();
      }
    }
  });
});
