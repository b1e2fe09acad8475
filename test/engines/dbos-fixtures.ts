/**
 * What the DBOS tests share: a DBOS system database per test run (created by DBOS, dropped after),
 * toolrun's PostgreSQL stores in a schema of their own, and an agent whose model and tools are
 * steered per run by the run's input text.
 */
import { randomBytes } from 'node:crypto';
import type { ChatMessage, Model, ModelResponse } from '../../src/agent/messages.ts';
import { ToolError } from '../../src/core/tool-error.ts';
import { defineTool } from '../../src/core/define-tool.ts';
import { createTestPool, POSTGRES_URL } from '../fixtures/distributed-services.ts';

/** A fresh DBOS system database URL on the test server (DBOS creates it at launch). */
export function dbosDatabaseUrl(prefix = 'toolrun_dbos_'): { url: string; name: string } {
  const name = `${prefix}${randomBytes(5).toString('hex')}`;
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), name };
}

/** Drops a DBOS system database (connections closed first). */
export async function dropDatabase(name: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a database name: ${name}`);
  const pool = createTestPool({ max: 1 });
  try {
    await pool.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await pool.end();
  }
}

/** How a run's `book` tool behaves, by the word in the run's input. */
export type BookMode = 'ok' | 'fail-once' | 'always-503' | 'broken-until-fixed';

export const CUSTOMER_EMAIL = 'dana.customer@example.com';

/** A 3-step agent: book (step 0), then charge (step 1), then the answer (step 2). Side effects counted per idempotency key. */
export function createTestAgent(options: { fixed?: () => boolean; gate?: () => Promise<void> } = {}) {
  const modelCalls = new Map<string, number>();
  const effects = new Map<string, number>();
  const executions = new Map<string, number>();
  const failedOnce = new Set<string>();
  const modeOf = (messages: readonly ChatMessage[]): BookMode => {
    const text = messages.find((message) => message.role === 'user')?.content ?? '';
    return (['fail-once', 'always-503', 'broken-until-fixed'] as const).find((mode) => text.includes(mode)) ?? 'ok';
  };
  const runModes = new Map<string, BookMode>();
  const model: Model = async (request): Promise<ModelResponse> => {
    modelCalls.set(request.runId, (modelCalls.get(request.runId) ?? 0) + 1);
    runModes.set(request.runId, modeOf(request.messages));
    const usage = { input: 100 + request.stepIndex, output: 10 };
    const last = request.messages[request.messages.length - 1];
    const lastOk = last?.role === 'tool' && typeof last.content === 'string' && last.content.includes('"status":"success"');
    const bookedOk = request.messages.some((message) => message.role === 'tool' && message.name === 'book' && message.content?.includes('"status":"success"'));
    if (!bookedOk) return { toolCalls: [{ id: `c${request.stepIndex}`, name: 'book', args: JSON.stringify({ flight: 'HAT001' }) }], usage };
    if (last?.name === 'book' && lastOk)
      return { toolCalls: [{ id: `c${request.stepIndex}`, name: 'charge', args: JSON.stringify({ cents: 12_900 }) }], usage };
    return { text: 'Booked HAT001 and charged 129.00', usage };
  };
  const effect = (key: string) => {
    executions.set(key, (executions.get(key) ?? 0) + 1);
    effects.set(key, 1); // honours the idempotency key: applied once whatever the executions
  };
  const runOf = (key: string) => key.replace(/:\d+:\d+$/, '');
  const book = defineTool({
    name: 'book',
    description: 'Books a flight',
    inputSchema: { type: 'object', properties: { flight: { type: 'string' } }, required: ['flight'] },
    retry: { maxAttempts: 3, backoff: { baseDelayMs: 5, factor: 2, maxDelayMs: 20, jitterMs: 1 } },
    execute: async ({ flight }, context) => {
      const mode = runModes.get(runOf(context.idempotencyKey)) ?? 'ok';
      if (mode === 'fail-once' && !failedOnce.has(context.idempotencyKey)) {
        failedOnce.add(context.idempotencyKey);
        executions.set(`${context.idempotencyKey}:failed`, 1);
        throw new ToolError({ kind: 'server', status: 503, message: 'Service Unavailable' });
      }
      if (mode === 'always-503' || (mode === 'broken-until-fixed' && !(options.fixed?.() ?? false)))
        throw new ToolError({ kind: 'server', status: 503, message: `upstream 503 while booking for ${CUSTOMER_EMAIL}` });
      if (mode === 'broken-until-fixed') await options.gate?.();
      effect(context.idempotencyKey);
      return { flight, confirmation: 'ABC123' };
    },
  });
  const charge = defineTool({
    name: 'charge',
    description: 'Charges the card',
    inputSchema: { type: 'object', properties: { cents: { type: 'number' } }, required: ['cents'] },
    execute: async ({ cents }, context) => {
      effect(context.idempotencyKey);
      return { charged: cents };
    },
  });
  return { model, tools: [book, charge], modelCalls, effects, executions };
}
