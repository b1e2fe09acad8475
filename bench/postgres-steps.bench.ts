/**
 * Issue 13's PostgreSQL rows: the cost of one step of a run (two messages, the checkpoint, a ledger
 * row) on a conversation of 10 and of 1,000 messages, committed at once (`commitStep`: one
 * statement appending the two messages) against port by port (`ledger.putIfAbsent`, the whole
 * conversation by `put`, `runs.put`), in the same run; and the bytes each sends per step. Per round,
 * a conversation of each length is seeded (not timed), then 20 steps in a row are timed; rounds
 * alternate the lengths and the modes, and the median of the rounds is reported. Needs PostgreSQL
 * (see test/fixtures/distributed-services.ts).
 */
import type { RunCheckpoint } from '../src/index.ts';
import { createPostgresStores } from '../src/stores/postgres/index.ts';
import { createTestPool, dropSchema, uniqueName } from '../test/fixtures/distributed-services.ts';
import type { BenchRow } from './measure.ts';

const STEPS_PER_SAMPLE = 20;

/** The characters of the parameters of every query `run` sends (what goes over the wire, about). */
async function parameterChars(pool: { query: (...args: never[]) => unknown }, run: () => Promise<unknown>): Promise<number> {
  const query = pool.query;
  let chars = 0;
  const count = (value: unknown): number =>
    typeof value === 'string' ? value.length : Array.isArray(value) ? value.reduce((sum: number, item) => sum + count(item), 0) : 8;
  pool.query = ((config: { values?: unknown[] }, ...rest: never[]) => {
    chars += (config.values ?? []).reduce((sum: number, value) => sum + count(value), 0);
    return (query as (...args: unknown[]) => unknown).call(pool, config, ...rest);
  }) as typeof pool.query;
  try {
    await run();
  } finally {
    pool.query = query;
  }
  return chars;
}

/** Runs the PostgreSQL step benchmark and returns its rows. */
export async function runPostgresStepsBench(options: { rounds?: number } = {}): Promise<BenchRow[]> {
  const rounds = options.rounds ?? 30;
  const pool = createTestPool({ max: 2 });
  const schema = uniqueName('toolrun_pgsteps_');
  const stores = await createPostgresStores({ pool, schema });
  const samples = new Map<string, number[]>();
  const sent = new Map<string, number>();
  const message = (index: number) => ({ role: index % 2 === 0 ? 'user' : 'assistant', content: `message ${index} `.repeat(20) });
  try {
    for (let round = 0; round < rounds; round++) {
      const lengths = round % 2 === 0 ? [10, 1000] : [1000, 10];
      for (const length of lengths) {
        const modes = (round + length) % 2 === 0 ? (['commit', 'ports'] as const) : (['ports', 'commit'] as const);
        for (const mode of modes) {
          const ref = `conv_${mode}_${length}_${round}`;
          const messages: unknown[] = Array.from({ length }, (_, index) => message(index));
          await stores.conversations.put(ref, messages);
          const step = async (index: number) => {
            const storedCount = messages.length;
            messages.push(
              { role: 'assistant', content: null, toolCalls: [{ id: `c${index}`, name: 'lookup', args: '{"id":"a"}' }] },
              { role: 'tool', toolCallId: `c${index}`, name: 'lookup', content: '{"status":"success","result":{"id":"a","status":"ok"}}' },
            );
            const checkpoint: RunCheckpoint = {
              runId: `run_${ref}`,
              messageId: 'm',
              status: 'running',
              stepIndex: index,
              conversationRef: ref,
              tokensSpent: { input: 100, output: 10 },
              toolAttempts: { lookup: 1 },
              data: { pendingStep: false },
              updatedAt: new Date().toISOString(),
            };
            const row = { key: `run_${ref}:${index}:0`, value: { status: 'success', result: { id: 'a', status: 'ok' } } };
            if (mode === 'commit') {
              await stores.journal.commit({
                conversationRef: ref,
                messages,
                storedCount,
                checkpoint,
                calls: [{ stepIndex: index, callIndex: 0, outcome: row.value }],
              });
            } else {
              await stores.ledger.putIfAbsent(row.key, row.value);
              await stores.conversations.put(ref, messages);
              await stores.runs.put(checkpoint);
            }
          };
          const start = process.hrtime.bigint();
          for (let index = 0; index < STEPS_PER_SAMPLE; index++) await step(index);
          const name = `${mode}:${length}`;
          samples.set(name, [...(samples.get(name) ?? []), Number(process.hrtime.bigint() - start) / STEPS_PER_SAMPLE]);
          if (round === 0) sent.set(name, await parameterChars(pool as never, () => step(STEPS_PER_SAMPLE)));
        }
      }
    }
  } finally {
    await stores.close();
    await dropSchema(pool, schema);
    await pool.end();
  }
  const median = (name: string) => {
    const sorted = [...samples.get(name)!].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)]!;
  };
  const row = (mode: 'commit' | 'ports', length: number, label: string): BenchRow => ({
    name: `PostgreSQL: one step, ${label}, conversation of ${length.toLocaleString('en-US')} messages`,
    medianNs: median(`${mode}:${length}`),
    ...(length !== 10 ? { baseline: `${label}, 10 messages`, ratio: median(`${mode}:${length}`) / median(`${mode}:10`) } : {}),
    note: `${sent.get(`${mode}:${length}`)!.toLocaleString('en-US')} parameter characters sent`,
  });
  return [
    row('commit', 10, 'one commit'),
    row('commit', 1000, 'one commit'),
    row('ports', 10, 'port by port'),
    row('ports', 1000, 'port by port'),
    {
      name: 'PostgreSQL: one step at 1,000 messages, one commit vs port by port',
      medianNs: median('commit:1000'),
      baseline: 'port by port, 1,000 messages',
      ratio: median('commit:1000') / median('ports:1000'),
    },
  ];
}
