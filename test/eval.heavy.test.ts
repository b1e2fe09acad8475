/**
 * `toolrun eval` offline: the scripted model on the first τ-bench airline tasks against the local
 * airline HTTP service, through the real command (in process), twice with the same seed.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { runToolrun } from '../src/cli/main.ts';
import type { ChatMessage } from '../src/agent/messages.ts';
import { crc32, PNG_SIGNATURE } from '../src/eval/raster-png.ts';
import { createScriptedModel } from '../src/eval/scripted-model.ts';
import { loadAirlineEvalTasks } from '../examples/airline/eval-workload.ts';
import type { EvalResults } from '../src/eval/run-eval.ts';
import { airlineDataPresent } from './fixtures/airline-test-workload.ts';

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

async function runEvalCommand(
  seed: number,
  faultsPerTask = 2,
  model: string[] = ['--model', 'scripted'],
): Promise<{ code: number; out: string; results: EvalResults }> {
  const out = mkdtempSync(join(tmpdir(), 'toolrun-eval-'));
  folders.push(out);
  const argv = [
    'node',
    'toolrun',
    'eval',
    ...model,
    '--tasks',
    '4',
    '--seed',
    String(seed),
    '--out',
    out,
    '--retry-after-s',
    '0',
    '--tool-timeout-ms',
    '300',
    '--faults-per-task',
    String(faultsPerTask),
  ];
  const code = await runToolrun(argv);
  return { code, out, results: JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as EvalResults };
}

/** The chunks of a PNG, each CRC checked; throws on a malformed file. */
function pngChunks(bytes: Buffer): Array<{ type: string; data: Buffer }> {
  expect(bytes.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
  const chunks: Array<{ type: string; data: Buffer }> = [];
  let at = 8;
  while (at < bytes.length) {
    const length = bytes.readUInt32BE(at);
    const type = bytes.subarray(at + 4, at + 8).toString('latin1');
    const data = bytes.subarray(at + 8, at + 8 + length);
    expect(bytes.readUInt32BE(at + 8 + length)).toBe(crc32(bytes.subarray(at + 4, at + 8 + length)));
    chunks.push({ type, data });
    at += 12 + length;
  }
  return chunks;
}

describe.skipIf(!airlineDataPresent)('toolrun eval --model scripted (4 τ-bench airline tasks)', () => {
  it('runs the three arms on the same tasks and faults, applies no write twice, and is deterministic under one seed', { timeout: 120_000 }, async () => {
    const first = await runEvalCommand(7);
    const second = await runEvalCommand(7);
    expect(first.code).toBe(0);
    const { results } = first;
    expect(results.tasks).toHaveLength(4);
    expect(results.arms.map((arm) => arm.arm)).toEqual(['sdk-default', 'toolrun', 'toolrun-policies']);
    // the same seed gives the same plan, outcomes and numbers
    expect(second.results).toEqual(results);
    // every arm met the same planned faults; the faults that happened are the plan's
    expect(results.plans.flatMap((plan) => plan.faults)).toHaveLength(8);
    for (const arm of results.arms) {
      expect(arm.duplicatedWrites).toBe(0);
      expect(arm.tasks).toBe(4);
      expect(arm.taskSuccess.low).toBeLessThanOrEqual(arm.taskSuccess.estimate);
      expect(arm.taskSuccess.high).toBeGreaterThanOrEqual(arm.taskSuccess.estimate);
    }
    // the arms differ only in what the model read: without faults every arm makes the same calls
    // and solves every task; with faults the arms read different texts and end differently
    const faultFree = (await runEvalCommand(7, 0)).results;
    for (const arm of faultFree.arms) {
      expect(arm.successes).toBe(4);
      expect(arm.toolCalls).toBe(faultFree.arms[0]!.toolCalls);
      expect(arm.modelCalls).toBe(faultFree.arms[0]!.modelCalls);
      expect(arm.wastedCallsPerTask.estimate).toBe(0);
    }
    expect(new Set(results.arms.map((arm) => `${arm.successes}/${arm.recoveredFaults}/${arm.toolCalls}`)).size).toBeGreaterThan(1);
    // with retries on, the transient faults (503, 429, timeout) are recovered without the model
    const policies = results.arms.find((arm) => arm.arm === 'toolrun-policies')!;
    for (const kind of ['unavailable', 'rate_limit', 'timeout'] as const) expect(policies.byFault[kind].recovered).toBe(policies.byFault[kind].fired);

    const markdown = readFileSync(join(first.out, 'results.md'), 'utf8');
    expect(markdown).toContain('| arm (what the model reads) |');
    expect(markdown).toContain('ai 6.0.326');
    const png = readFileSync(join(first.out, 'plot.png'));
    const chunks = pngChunks(png);
    expect(chunks.map((chunk) => chunk.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
    const header = chunks[0]!.data;
    const [width, height] = [header.readUInt32BE(0), header.readUInt32BE(4)];
    expect(inflateSync(chunks[1]!.data)).toHaveLength(height * (1 + width * 3));
    expect(png.equals(readFileSync(join(second.out, 'plot.png')))).toBe(true);
  });
});

interface WireMessage {
  role: ChatMessage['role'];
  content: string | null;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

/**
 * An OpenAI-compatible chat-completions server whose answers are the scripted model's: it finds the
 * task by the conversation's first customer message. Requests must carry `Authorization: Bearer <key>`.
 */
async function startScriptedEndpoint(key: string): Promise<{ server: Server; baseUrl: string; requests: () => number }> {
  const tasks = loadAirlineEvalTasks();
  let requests = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        requests += 1;
        if (request.headers.authorization !== `Bearer ${key}`) {
          response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'bad key' } }));
          return;
        }
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages: WireMessage[]; tools: Array<{ function: { name: string } }> };
        const messages: ChatMessage[] = body.messages.map((message) => ({
          role: message.role,
          content: message.content,
          ...(message.tool_calls
            ? { toolCalls: message.tool_calls.map((call) => ({ id: call.id, name: call.function.name, args: call.function.arguments })) }
            : {}),
          ...(message.tool_call_id ? { toolCallId: message.tool_call_id } : {}),
        }));
        const firstUser = messages.find((message) => message.role === 'user')?.content;
        const task = tasks.find((candidate) => candidate.turns[0]?.userMessage === firstUser)!;
        const answer = await createScriptedModel(task)({
          messages,
          tools: body.tools.map((tool) => ({ name: tool.function.name, description: '', inputSchema: {} })),
          signal: new AbortController().signal,
          stepIndex: messages.filter((message) => message.role === 'assistant').length,
          runId: '',
        });
        const toolCalls = answer.toolCalls?.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.args } }));
        response.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: `chatcmpl-${requests}`,
            object: 'chat.completion',
            choices: [
              {
                index: 0,
                finish_reason: toolCalls ? 'tool_calls' : 'stop',
                message: { role: 'assistant', content: answer.text ?? null, ...(toolCalls ? { tool_calls: toolCalls } : {}) },
              },
            ],
            usage: { prompt_tokens: answer.usage.input, completion_tokens: answer.usage.output },
          }),
        );
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, requests: () => requests };
}

describe.skipIf(!airlineDataPresent)('toolrun eval against an OpenAI-compatible endpoint', () => {
  it('reads the key from --api-key-env, calls the endpoint at --base-url, and measures what the offline run measures', { timeout: 120_000 }, async () => {
    const endpoint = await startScriptedEndpoint('test-key-123');
    process.env.TOOLRUN_EVAL_TEST_KEY = 'test-key-123';
    try {
      const online = await runEvalCommand(11, 2, ['--model', 'scripted-over-http', '--base-url', endpoint.baseUrl, '--api-key-env', 'TOOLRUN_EVAL_TEST_KEY']);
      expect(online.code).toBe(0);
      const offline = await runEvalCommand(11);
      expect(endpoint.requests()).toBe(online.results.arms.reduce((sum, arm) => sum + arm.modelCalls, 0));
      expect({ ...online.results, model: 'scripted' }).toEqual(offline.results);
    } finally {
      delete process.env.TOOLRUN_EVAL_TEST_KEY;
      await new Promise<void>((resolve) => endpoint.server.close(() => resolve()));
    }
    // no key in the variable: a usage error before anything runs
    expect(await runToolrun(['node', 'toolrun', 'eval', '--model', 'gpt-4o', '--api-key-env', 'TOOLRUN_EVAL_UNSET_KEY', '--tasks', '1'])).toBe(2);
  });
});
