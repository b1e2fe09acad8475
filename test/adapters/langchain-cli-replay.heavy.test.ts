/**
 * A LangChain agent run dead-lettered on SQLite stores with a checkpointer (a file), then replayed
 * by the CLI (`toolrun dlq replay`, in process) through the `langchain` host the config registers:
 * the write applied once, the agent's loop asked for the remaining step only, the entry gone.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AIMessage, createAgent, fakeModel, HumanMessage } from 'langchain';
import { afterAll, describe, expect, it } from 'vitest';
import { toolrunMiddleware } from '../../src/adapters/langchain/index.ts';
import { createToolRuntime, defineTool, ToolError } from '../../src/index.ts';
import { createSqliteStores } from '../../src/stores/sqlite/index.ts';
import { toolrunInProcess } from '../fixtures/toolrun-in-process.ts';
import { FileCheckpointSaver } from './fixtures/file-checkpoint-saver.ts';

const directory = mkdtempSync(join(tmpdir(), 'toolrun-langchain-cli-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('toolrun dlq replay of a LangChain entry (the langchain host from the config)', () => {
  it('continues the agent from the checkpoint: one write, one model call, the entry removed', async () => {
    const db = join(directory, 'toolrun.db');
    const checkpoints = join(directory, 'checkpoints.json');
    const writes = join(directory, 'writes.txt');
    writeFileSync(writes, '');

    const stores = createSqliteStores({ path: db });
    const runtime = createToolRuntime({
      retry: { backoff: { baseDelayMs: 1, jitterMs: 0 }, minDelayMs: 1 },
      tools: [
        defineTool({
          name: 'save_order',
          description: 'Saves an order',
          inputSchema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
          execute: async () => {
            throw new ToolError({ kind: 'server', status: 503, message: 'Service Unavailable' });
          },
        }),
      ],
    });
    const model = fakeModel()
      .respondWithTools([{ name: 'save_order', args: { order: 'O-1' }, id: 'call_1' }])
      .respond(new AIMessage('I could not save it.'));
    const agent = createAgent({
      model,
      middleware: [toolrunMiddleware(runtime, { deadLetter: { stores } })],
      checkpointer: new FileCheckpointSaver(checkpoints),
    });
    await agent.invoke({ messages: [new HumanMessage('Save order O-1.')] }, { configurable: { thread_id: 'order-1' } });
    await stores.close();

    const listed = await toolrunInProcess(['dlq', 'list', '--dlq', 'tool', '--db', db, '--json']);
    const records = JSON.parse(listed.stdout) as Array<{ id: string; entry: { originalMessageId: string; conversationRef: string } }>;
    expect(records).toHaveLength(1);
    expect(records[0]!.entry.originalMessageId).toMatch(/^langchain:run_/);
    expect(records[0]!.entry.conversationRef).toMatch(/^langgraph:order-1:/);

    const config = fileURLToPath(new URL('./fixtures/langchain-replay.config.ts', import.meta.url));
    const env = { LANGCHAIN_CHECKPOINTS_FILE: checkpoints, LANGCHAIN_WRITES_FILE: writes };
    const replayed = await toolrunInProcess(['dlq', 'replay', records[0]!.id, '--db', db, '--config', config, '--json'], env);
    expect(replayed.stderr).toBe('');
    expect(JSON.parse(replayed.stdout)).toMatchObject({ status: 'completed', host: 'langchain', modelCalls: 1, removed: true });
    expect(readFileSync(writes, 'utf8')).toBe('O-1\n');
    const again = await toolrunInProcess(['dlq', 'replay', records[0]!.id, '--db', db, '--config', config, '--json'], env);
    expect(again.code).not.toBe(0);
    expect(readFileSync(writes, 'utf8')).toBe('O-1\n');
    expect(JSON.parse((await toolrunInProcess(['dlq', 'list', '--dlq', 'tool', '--db', db, '--json'])).stdout)).toEqual([]);
  });
});
