/**
 * Property tests (fast-check) of the routing contract against arbitrary input: whatever the body,
 * `handleMessage` never throws, the message ends in exactly one place (a completed run or the
 * message DLQ; these runs call no tool, so never the tool DLQ), and the model is called if and only
 * if the body is a valid run request. Validity is decided by an oracle written here from the
 * documented message format (`RUN_REQUEST_SCHEMA`'s TSDoc), not by the schema itself.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryStores, createWorker, handleMessage, type MessageFailureEntry, type ToolFailureEntry } from '../src/index.ts';
import { createScriptedModel } from '../src/testing/index.ts';

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);
const KEYS = new Set(['input', 'messages', 'runId', 'sessionId', 'system', 'metadata']);

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isString = (value: unknown): value is string => typeof value === 'string';
/** Length in code points, as JSON Schema counts `minLength`/`maxLength`. */
const codePoints = (text: string) => [...text].length;

function isValidMessageItem(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  if (!('role' in value) || !ROLES.has(value.role as string)) return false;
  if (!('content' in value) || !(value.content === null || isString(value.content))) return false;
  if ('toolCalls' in value && !Array.isArray(value.toolCalls)) return false;
  if ('toolCallId' in value && !isString(value.toolCallId)) return false;
  if ('name' in value && !isString(value.name)) return false;
  return true;
}

/** The documented run-request format: `{ input | messages, runId?, sessionId?, system?, metadata? }`, nothing else. */
function isValidRunRequest(body: string): boolean {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return false;
  }
  if (!isPlainObject(value)) return false;
  if (Object.keys(value).some((key) => !KEYS.has(key))) return false;
  if (!('input' in value) && !('messages' in value)) return false;
  if ('input' in value && !(isString(value.input) && codePoints(value.input) >= 1 && codePoints(value.input) <= 1_000_000)) return false;
  if ('messages' in value && !(Array.isArray(value.messages) && value.messages.length >= 1 && value.messages.every(isValidMessageItem))) return false;
  if ('runId' in value && !(isString(value.runId) && /^[A-Za-z0-9_.:-]{1,200}$/.test(value.runId))) return false;
  if ('sessionId' in value && !(isString(value.sessionId) && codePoints(value.sessionId) >= 1 && codePoints(value.sessionId) <= 200)) return false;
  if ('system' in value && !isString(value.system)) return false;
  if ('metadata' in value && !isPlainObject(value.metadata)) return false;
  return true;
}

const json = fc.jsonValue({ maxDepth: 2 });
const text = fc.string({ unit: 'binary', maxLength: 30 });

/** Objects built from the format's own keys, each with a right or a wrong value, sometimes with an unknown key. */
const nearValidRequest = fc
  .record(
    {
      input: fc.oneof(text, json),
      messages: fc.oneof(
        fc.array(
          fc.record(
            {
              role: fc.oneof(fc.constantFrom('system', 'user', 'assistant', 'tool', 'robot', 'User'), json),
              content: fc.oneof(text, fc.constant(null), json),
              toolCallId: fc.oneof(text, json),
              name: fc.oneof(text, json),
              toolCalls: fc.oneof(fc.array(json, { maxLength: 2 }), json),
            },
            { requiredKeys: [] },
          ),
          { maxLength: 3 },
        ),
        json,
      ),
      runId: fc.oneof(fc.stringMatching(/^[A-Za-z0-9_.:-]{1,24}$/), text, json),
      sessionId: fc.oneof(text, json),
      system: fc.oneof(text, json),
      metadata: fc.oneof(fc.dictionary(fc.string({ maxLength: 5 }), json, { maxKeys: 3 }), json),
      unknownKey: fc.tuple(fc.constantFrom('inputs', 'prompt', 'run_id', '__proto__', 'constructor'), json),
    },
    { requiredKeys: [] },
  )
  .map(({ unknownKey, ...fields }) => {
    const body: Record<string, unknown> = { ...fields };
    if (unknownKey !== undefined) Object.defineProperty(body, unknownKey[0], { value: unknownKey[1], enumerable: true, writable: true, configurable: true });
    return JSON.stringify(body);
  });

/** A valid request with one field replaced by an arbitrary JSON value (`null`, a wrong type…) or one unknown key added. */
const oneFieldChanged = fc
  .tuple(
    fc.record(
      {
        input: fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }),
        runId: fc.stringMatching(/^[A-Za-z0-9_.:-]{1,24}$/),
        sessionId: fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }),
        system: text,
        metadata: fc.dictionary(fc.string({ maxLength: 5 }), json, { maxKeys: 3 }),
      },
      { requiredKeys: ['input'] },
    ),
    fc.constantFrom('input', 'messages', 'runId', 'sessionId', 'system', 'metadata', 'prompt'),
    fc.oneof(fc.constant(null), json),
  )
  .map(([request, key, value]) => JSON.stringify({ ...request, [key]: value }));

const anyBody = fc.oneof(
  { weight: 3, arbitrary: oneFieldChanged },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) },
  { weight: 2, arbitrary: json.map((value) => JSON.stringify(value)) },
  { weight: 4, arbitrary: nearValidRequest },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).map((input) => JSON.stringify({ input })) },
);

let sequence = 0;

async function route(body: string) {
  const stores = createMemoryStores();
  const model = createScriptedModel([{ text: 'answered', usage: { input: 3, output: 1 } }]);
  const messageDlq: MessageFailureEntry[] = [];
  const toolDlq: ToolFailureEntry[] = [];
  const id = `m-${sequence++}`;
  const result = await handleMessage({ body, id }, { model, tools: [], stores, queues: { messageDlq, toolDlq } });
  const checkpoint = result.runId === null ? undefined : await stores.runs.get(result.runId);
  return { result, model, messageDlq, toolDlq, checkpoint, id };
}

describe('handleMessage on arbitrary bodies (fast-check)', () => {
  it('never throws, ends in exactly one place, and calls the model only for a valid run request', async () => {
    let valid = 0;
    await fc.assert(
      fc.asyncProperty(anyBody, async (body) => {
        const { result, model, messageDlq, toolDlq, checkpoint, id } = await route(body);
        const places = (checkpoint?.status === 'completed' ? 1 : 0) + messageDlq.length + toolDlq.length;
        expect(places).toBe(1);
        expect(toolDlq).toHaveLength(0);
        if (isValidRunRequest(body)) {
          valid += 1;
          expect(result.status).toBe('completed');
          expect(model.calls).toBe(1);
        } else {
          expect(result).toMatchObject({ status: 'rejected', runId: null });
          expect(model.calls).toBe(0);
          expect(messageDlq[0]).toMatchObject({ kind: 'message', rawBody: body, messageId: id });
          expect(['MALFORMED_JSON', 'INVALID_MESSAGE']).toContain(messageDlq[0]!.reason.code);
        }
      }),
      { numRuns: 600, seed: 42 },
    );
    // The generators must reach both sides of the oracle, or the property says little.
    expect(valid).toBeGreaterThan(30);
  });

  it('a message that is not even { body: string } is rejected, not thrown', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.anything({ withNullPrototype: true, withBigInt: true }),
          fc.record({ body: fc.anything({ withNullPrototype: true, withBigInt: true }), id: fc.anything() }, { requiredKeys: [] }),
        ),
        async (message) => {
          fc.pre(!(typeof message === 'object' && message !== null && typeof (message as { body?: unknown }).body === 'string'));
          const model = createScriptedModel([{ text: 'answered', usage: { input: 1, output: 1 } }]);
          const messageDlq: MessageFailureEntry[] = [];
          const result = await handleMessage(message as never, { model, tools: [], stores: createMemoryStores(), queues: { messageDlq, toolDlq: [] } });
          expect(result.status).toBe('rejected');
          expect(messageDlq).toHaveLength(1);
          expect(typeof messageDlq[0]!.rawBody).toBe('string');
          expect(model.calls).toBe(0);
        },
      ),
      { numRuns: 300, seed: 42 },
    );
  });

  it('a worker over a batch of arbitrary bodies acknowledges every message and places each exactly once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(anyBody, { minLength: 1, maxLength: 25 }), async (bodies) => {
        const stores = createMemoryStores();
        const model = createScriptedModel([{ text: 'answered', usage: { input: 3, output: 1 } }]);
        const ids = await Promise.all(bodies.map((body, index) => stores.queue.enqueue({ id: `b-${index}`, body })));
        const errors: unknown[] = [];
        const worker = createWorker({ model, tools: [], stores, concurrency: 3, onError: (error) => errors.push(error) });
        await worker.runUntilEmpty();
        expect(errors).toEqual([]);
        expect(await stores.queue.size()).toBe(0);
        const rejected = new Set((await stores.messageDlq.list()).map((record) => (record.entry as MessageFailureEntry).messageId));
        const validRunIds = new Set<string>();
        for (const [index, id] of ids.entries()) {
          const body = bodies[index]!;
          const valid = isValidRunRequest(body);
          // A body may name its run; two messages naming one run share it (the second finds it finished).
          const runId = valid ? ((JSON.parse(body) as { runId?: string }).runId ?? `run_${id}`) : `run_${id}`;
          if (valid) validRunIds.add(runId);
          const completed = valid && (await stores.runs.get(runId))?.status === 'completed';
          expect(Number(completed) + Number(rejected.has(id)), id).toBe(1);
          expect(completed, id).toBe(valid);
        }
        expect(await stores.toolDlq.size()).toBe(0);
        expect(model.calls).toBe(validRunIds.size);
      }),
      { numRuns: 60, seed: 7 },
    );
  });
});
