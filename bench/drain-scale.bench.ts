/**
 * Drain throughput against the size of the tool DLQ: `drainToolDlq` replays the oldest 1,000
 * entries (`TOOLRUN_DRAIN_BATCH`; in 3 rounds alternated across the sizes, the best round kept)
 * of a tool DLQ of 10^3, 10^5 and 10^6 entries (capped by
 * `TOOLRUN_SCALE_MAX`), on SQLite and on PostgreSQL (when the local test server answers;
 * `TOOLRUN_SCALE_POSTGRES=0` skips it). Each drained entry is a real run: a checkpoint, a
 * conversation and a DLQ entry written through the stores, whose replay completes (the model
 * answers at once) and removes the entry. The rest of the queue is filler entries inserted through
 * SQL after them (the store's own triggers keep its counts), so the drain reads the oldest entries
 * first, as it does in production. The target: entries/s flat from 10^3 to 10^6 (ratio to the
 * smallest size ≈ 1).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Model } from '../src/agent/messages.ts';
import type { DeadLetterQueue, Stores } from '../src/ground/ports/stores.ts';
import type { RunCheckpoint } from '../src/ground/ports/run-journal.ts';
import { createPostgresStores } from '../src/stores/postgres/index.ts';
import { createSqliteStores } from '../src/stores/sqlite/index.ts';
import { drainToolDlq } from '../src/worker/drain-tool-dlq.ts';
import type { ResumableEntry } from '../src/ground/dead-letter-entries.ts';
import type { BenchRow } from './measure.ts';

const ALL_SIZES = [1_000, 100_000, 1_000_000];
const BATCH = Number(process.env.TOOLRUN_DRAIN_BATCH ?? 1_000);
const NOW_MS = Date.UTC(2026, 0, 1);

function sizesToRun(): number[] {
  const max = Number(process.env.TOOLRUN_SCALE_MAX ?? Number.POSITIVE_INFINITY);
  const sizes = ALL_SIZES.filter((size) => size <= max);
  return sizes.length > 0 ? sizes : [Math.max(1, Math.floor(max))];
}

/** A tool-DLQ entry as the worker writes it (about 480 bytes of JSON). */
function toolEntry(prefix: string, index: number): ResumableEntry {
  return {
    kind: 'tool',
    runId: `${prefix}run_${index}`,
    stepIndex: 1,
    toolName: 'book_reservation',
    toolArgs: { reservation_id: `R${index}`, user_id: 'mia_li_3668' },
    attempts: 3,
    lastError: { kind: 'server', status: 503, message: 'book_reservation failed (server)' },
    conversationRef: `conv_${prefix}${index.toString(16).padStart(12, '0')}`,
    tokensSpent: { input: 1_000 + (index % 900), output: 40 },
    firstSeenAt: new Date(NOW_MS - 1e9 + index).toISOString(),
    originalMessageId: `msg_${index}`,
    reason: 'retry-budget-exhausted',
  } as unknown as ResumableEntry;
}

/** The model of a replay: answers at once, so a drained run completes in one step. */
const model: Model = async () => ({ text: 'Rebooked.', usage: { input: 10, output: 2 } });

/** Writes `BATCH` replayable runs (checkpoint, conversation, DLQ entry) through the stores. */
async function seedReplayable(stores: Stores, prefix: string): Promise<void> {
  for (let index = 0; index < BATCH; index += 1) {
    const entry = toolEntry(prefix, index) as unknown as { runId: string; conversationRef: string };
    await stores.conversations.put(entry.conversationRef, [
      { role: 'user', content: `rebook R${index}` },
      { role: 'assistant', content: 'The booking service is down; I will retry.' },
    ]);
    const checkpoint: RunCheckpoint = {
      runId: entry.runId,
      messageId: `msg_${index}`,
      status: 'tool_failed',
      stepIndex: 1,
      conversationRef: entry.conversationRef,
      tokensSpent: { input: 1_000, output: 40 },
      toolAttempts: {},
      updatedAt: new Date(NOW_MS).toISOString(),
    };
    await stores.runs.put(checkpoint);
    await (stores.toolDlq as DeadLetterQueue<unknown>).push(entry);
  }
}

interface Backend {
  name: string;
  /** Fresh stores holding `BATCH` replayable entries, then filler up to `size` entries. */
  open(size: number): Promise<{ stores: Stores; seedMs: number; close(): Promise<void> }>;
}

function sqliteBackend(directory: string): Backend {
  return {
    name: 'SQLite',
    async open(size) {
      const stores = createSqliteStores({ path: join(directory, `drain-${size}.db`) });
      const started = performance.now();
      await seedReplayable(stores, '');
      const insert = stores.database.prepare("INSERT INTO dead_letters (queue, entry, added_at_ms) VALUES ('tool', ?, ?)");
      stores.database.transaction(() => {
        for (let index = BATCH; index < size; index += 1) insert.run(JSON.stringify(toolEntry('filler_', index)), NOW_MS - 1e9 + index);
      })();
      return { stores, seedMs: performance.now() - started, close: () => stores.close() };
    },
  };
}

function postgresBackend(url: string): Backend {
  return {
    name: 'PostgreSQL',
    async open(size) {
      const schema = `toolrun_drain_scale_${process.pid}_${size}`;
      const stores = await createPostgresStores({ connectionString: url, schema, maxConnections: 8 });
      const started = performance.now();
      await seedReplayable(stores, '');
      // the filler entry of toolEntry('filler_', i), built in SQL, with the cause columns the store writes
      const seedSql = `
        INSERT INTO "${schema}".dead_letters (queue, entry, added_at_ms, cause_kind, cause_tool_name, cause_reason)
        SELECT 'tool', json_build_object(
            'kind', 'tool', 'runId', 'filler_run_' || i, 'stepIndex', 1, 'toolName', 'book_reservation',
            'toolArgs', json_build_object('reservation_id', 'R' || i, 'user_id', 'mia_li_3668'), 'attempts', 3,
            'lastError', json_build_object('kind', 'server', 'status', 503, 'message', 'book_reservation failed (server)'),
            'conversationRef', 'conv_filler_' || lpad(to_hex(i), 12, '0'), 'tokensSpent', json_build_object('input', 1000 + i % 900, 'output', 40),
            'firstSeenAt', to_char(to_timestamp(($3::bigint - 1000000000 + i) / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'originalMessageId', 'msg_' || i, 'reason', 'retry-budget-exhausted')::text,
          $3::bigint - 1000000000 + i, 'tool', 'book_reservation', 'retry-budget-exhausted'
        FROM generate_series($1::bigint, $2::bigint - 1) AS i ORDER BY i`;
      for (let start = BATCH; start < size; start += 250_000) await stores.pool.query(seedSql, [start, Math.min(size, start + 250_000), NOW_MS]);
      await stores.pool.query(`ANALYZE "${schema}".dead_letters`);
      return {
        stores,
        seedMs: performance.now() - started,
        async close() {
          await stores.pool.query(`DROP SCHEMA "${schema}" CASCADE`);
          await stores.close();
        },
      };
    },
  };
}

/** Rounds per size, alternated across the sizes; each drains BATCH / ROUNDS entries; the best round counts. */
const ROUNDS = 3;

async function runBackend(backend: Backend): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const sizes = sizesToRun();
  const opened: Array<{ size: number; stores: Stores; close(): Promise<void> }> = [];
  try {
    for (const size of sizes) {
      const { stores, seedMs, close } = await backend.open(size);
      opened.push({ size, stores, close });
      rows.push({
        name: `${backend.name}: seed ${size.toLocaleString('en-US')} tool-DLQ entries (${BATCH.toLocaleString('en-US')} replayable)`,
        medianNs: seedMs * 1e6,
        note: 'once',
      });
    }
    const perRound = Math.floor(BATCH / ROUNDS);
    const best = new Map<number, number>();
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const { size, stores } of opened) {
        const before = await stores.toolDlq.size();
        const started = performance.now();
        const report = await drainToolDlq({ stores, model, tools: [], limit: perRound, concurrency: 4 });
        const ms = performance.now() - started;
        const after = await stores.toolDlq.size();
        if (report.outcomes.completed !== perRound || before - after !== perRound) {
          throw new Error(`drain at ${size}: expected ${perRound} completed and removed, got ${JSON.stringify(report.outcomes)}, ${before - after} removed`);
        }
        best.set(size, Math.max(best.get(size) ?? 0, (perRound / ms) * 1000));
      }
    }
    const baseRate = best.get(sizes[0]!)!;
    for (const size of sizes) {
      const rate = best.get(size)!;
      rows.push({
        name: `${backend.name} ${size.toLocaleString('en-US')}: drain ${perRound} entries × ${ROUNDS} rounds (alternated across sizes), best ${rate.toFixed(0)} entries/s`,
        medianNs: 1e9 / rate,
        note: 'per entry, best round',
        ...(size === sizes[0]
          ? {}
          : { baseline: `entries/s at ${sizes[0]!.toLocaleString('en-US')} (${baseRate.toFixed(0)}), ratio of rates`, ratio: rate / baseRate }),
      });
    }
  } finally {
    for (const { close } of opened) await close();
  }
  return rows;
}

/** Runs the drain scale benchmark; see the module comment. */
export async function runDrainScaleBench(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const directory = mkdtempSync(join(tmpdir(), 'toolrun-drain-scale-'));
  try {
    rows.push(...(await runBackend(sqliteBackend(directory))));
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  if (process.env.TOOLRUN_SCALE_POSTGRES !== '0') {
    const url = process.env.TOOLRUN_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    try {
      rows.push(...(await runBackend(postgresBackend(url))));
    } catch (error) {
      rows.push({ name: 'PostgreSQL', medianNs: 0, note: `skipped: ${(error as Error).message.slice(0, 200)}` });
    }
  }
  return rows;
}
