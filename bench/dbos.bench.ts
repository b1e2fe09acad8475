/**
 * toolrun inside DBOS Transact: the per-run cost of a 3-step agent run (the worker benchmarks' run:
 * `lookup` twice, then the answer — 3 model calls, 2 tool calls) as a DBOS workflow with toolrun
 * (`createDbosAgent`: the model and tool calls as DBOS steps, toolrun's runtime, routing and
 * breakers around them), against the same DBOS workflow with the same model and tool as bare
 * `DBOS.runStep` steps, and against toolrun's own PostgreSQL worker (`handleMessage` on
 * `createPostgresStores`, a journal commit per step). One DBOS process on the test PostgreSQL
 * (its system database created for the bench and dropped after); runs one at a time, the three
 * cases alternating per round, the median of the rounds reported — wall time, and the CPU time of
 * this process (the DBOS executor: everything but PostgreSQL), which a shared machine disturbs
 * less. Needs PostgreSQL (see
 * test/fixtures/distributed-services.ts).
 */
import { randomBytes } from 'node:crypto';
import { DBOS } from '@dbos-inc/dbos-sdk';
import type { ChatMessage, Model, ModelResponse } from '../src/agent/messages.ts';
import { defineTool, handleMessage } from '../src/index.ts';
import { createDbosAgent } from '../src/engines/dbos/index.ts';
import { createPostgresStores } from '../src/stores/postgres/index.ts';
import { createTestPool, dropSchema, POSTGRES_URL, uniqueName } from '../test/fixtures/distributed-services.ts';
import type { BenchRow } from './measure.ts';
import { LOOKUP_TOOL, THREE_STEP_TURNS } from './three-step-run.ts';

const model: Model = async (request) => THREE_STEP_TURNS[request.stepIndex] as ModelResponse;
const lookup = async ({ id }: { id: string }) => ({ id, status: 'ok' });

/** The same run as bare DBOS steps: the model's turn, then its tool calls, until it answers. */
async function bareWorkflow(input: { runId: string; body: string }): Promise<{ text: string | null; steps: number }> {
  const messages: ChatMessage[] = [{ role: 'user', content: (JSON.parse(input.body) as { input: string }).input }];
  for (let stepIndex = 0; ; stepIndex++) {
    const response = await DBOS.runStep(() => model({ messages, tools: [], stepIndex, runId: input.runId, signal: new AbortController().signal }), {
      name: `model:${stepIndex}`,
    });
    messages.push({ role: 'assistant', content: response.text ?? null, ...(response.toolCalls ? { toolCalls: response.toolCalls } : {}) });
    if (!response.toolCalls?.length) return { text: response.text ?? null, steps: stepIndex + 1 };
    for (const [callIndex, call] of response.toolCalls.entries()) {
      const result = await DBOS.runStep(() => lookup(JSON.parse(call.args as string) as { id: string }), { name: `tool:${stepIndex}:${callIndex}` });
      messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: JSON.stringify(result) });
    }
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Runs the DBOS benchmark and returns its rows. */
export async function runDbosBench(options: { rounds?: number; runsPerRound?: number } = {}): Promise<BenchRow[]> {
  const rounds = options.rounds ?? 15;
  const runsPerRound = options.runsPerRound ?? 20;
  const systemDatabase = `toolrun_dbos_bench_${randomBytes(4).toString('hex')}`;
  const systemDatabaseUrl = Object.assign(new URL(POSTGRES_URL), { pathname: `/${systemDatabase}` }).toString();
  const dbosSchema = uniqueName('toolrun_dbos_bench_');
  const workerSchema = uniqueName('toolrun_pgworker_bench_');
  const admin = createTestPool({ max: 2 });
  const dbosStores = await createPostgresStores({ connectionString: POSTGRES_URL, schema: dbosSchema });
  const workerStores = await createPostgresStores({ connectionString: POSTGRES_URL, schema: workerSchema });
  const tool = defineTool({ ...LOOKUP_TOOL, execute: lookup });
  const agent = createDbosAgent({ dbos: DBOS, model, tools: [tool], stores: dbosStores });
  const bare = DBOS.registerWorkflow(bareWorkflow, { name: 'bench.bare-agent' });
  DBOS.setConfig({ name: 'toolrun-dbos-bench', systemDatabaseUrl, logLevel: 'error' });
  await DBOS.launch();
  const samples: Record<'toolrun' | 'bare' | 'worker', number[]> = { toolrun: [], bare: [], worker: [] };
  const cpu: Record<'toolrun' | 'bare' | 'worker', number[]> = { toolrun: [], bare: [], worker: [] };
  const body = JSON.stringify({ input: 'look a and b up' });
  const cases = {
    toolrun: async (id: string) => {
      const result = await agent.run({ id, body });
      if (result?.status !== 'completed') throw new Error(`toolrun in DBOS: ${result?.status}`);
    },
    bare: async (id: string) => {
      const result = await (await DBOS.startWorkflow(bare, { workflowID: `bare_${id}` })({ runId: `bare_${id}`, body })).getResult();
      if (result.steps !== 3) throw new Error('bare DBOS: not 3 steps');
    },
    worker: async (id: string) => {
      const result = await handleMessage({ id, body }, { model, tools: [tool], stores: workerStores });
      if (result.status !== 'completed') throw new Error(`PostgreSQL worker: ${result.status}`);
    },
  };
  try {
    const names = Object.keys(cases) as (keyof typeof cases)[];
    for (const name of names) for (let index = 0; index < 5; index++) await cases[name](`warm_${name}_${index}`);
    for (let round = 0; round < rounds; round++) {
      const order = round % 3 === 0 ? names : round % 3 === 1 ? [...names.slice(1), names[0]!] : [...names.slice(2), ...names.slice(0, 2)];
      for (const name of order) {
        const start = process.hrtime.bigint();
        const cpuStart = process.cpuUsage();
        for (let index = 0; index < runsPerRound; index++) await cases[name](`r${round}_${name}_${index}`);
        samples[name].push(Number(process.hrtime.bigint() - start) / runsPerRound);
        const used = process.cpuUsage(cpuStart);
        cpu[name].push(((used.user + used.system) * 1000) / runsPerRound);
      }
    }
  } finally {
    await DBOS.shutdown();
    await dbosStores.close();
    await workerStores.close();
    await dropSchema(admin, dbosSchema);
    await dropSchema(admin, workerSchema);
    await admin.query(`DROP DATABASE IF EXISTS "${systemDatabase}" WITH (FORCE)`);
    await admin.end();
  }
  const toolrun = median(samples.toolrun);
  const bareNs = median(samples.bare);
  const worker = median(samples.worker);
  return [
    { name: 'DBOS workflow, bare steps (3 model + 2 tool steps)', medianNs: bareNs },
    { name: 'DBOS workflow with toolrun (createDbosAgent)', medianNs: toolrun, baseline: 'DBOS bare steps', ratio: toolrun / bareNs, note: 'goal ≤ 1.15' },
    { name: "toolrun's own PostgreSQL worker (handleMessage)", medianNs: worker },
    { name: 'DBOS workflow with toolrun', medianNs: toolrun, baseline: 'PostgreSQL worker', ratio: toolrun / worker },
    { name: 'CPU of this process per run, DBOS bare steps', medianNs: median(cpu.bare) },
    {
      name: 'CPU of this process per run, DBOS with toolrun',
      medianNs: median(cpu.toolrun),
      baseline: 'CPU, bare steps',
      ratio: median(cpu.toolrun) / median(cpu.bare),
    },
    { name: 'CPU of this process per run, PostgreSQL worker', medianNs: median(cpu.worker) },
  ];
}
