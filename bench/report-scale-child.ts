/**
 * The child process of the report scale benchmark (`bench/report-scale.bench.ts`): runs one
 * report and prints, as the last line on stderr, `{"ms":…,"maxRssKb":…,"records":…}` (peak RSS from
 * `process.resourceUsage()`, in KiB). The report itself goes to stdout (the parent ignores it).
 *
 * - `cli ARGS…`: `toolrun ARGS…` as a user runs it (`report --db FILE --json`, `report --store
 *   postgres://…`, `report --from-log FILE`).
 * - `before sqlite FILE` / `before postgres URL SCHEMA`: what `toolrun report` did before it
 *   streamed: every record read into one array (pages by `offset`), then the report built.
 */
import { runToolrun } from '../src/cli/main.ts';
import type { FailureLog, FailureLogRecord } from '../src/ground/ports/failure-log.ts';
import { buildFailureReport } from '../src/observability/report/build-failure-report.ts';

async function readAllByOffset(log: FailureLog, pageSize = 1_000): Promise<FailureLogRecord[]> {
  const records: FailureLogRecord[] = [];
  for (let offset = 0; ; offset += pageSize) {
    const page = await log.list({ limit: pageSize, offset });
    records.push(...page);
    if (page.length < pageSize) return records;
  }
}

const [mode, ...rest] = process.argv.slice(2);
const started = performance.now();
let records = -1;
if (mode === 'cli') {
  const code = await runToolrun(['node', 'toolrun', ...rest]);
  if (code !== 0) throw new Error(`toolrun ${rest.join(' ')} exited ${code}`);
} else if (mode === 'before' && rest[0] === 'sqlite') {
  const { openSqliteFailureLog } = await import('../src/stores/sqlite/sqlite-failure-log.ts');
  const log = openSqliteFailureLog({ path: rest[1]! });
  const all = await readAllByOffset(log);
  log.close();
  records = buildFailureReport(all).totals.records;
  process.stdout.write(`${records}\n`);
} else if (mode === 'before' && rest[0] === 'postgres') {
  const { createPostgresFailureLog, createPostgresPool } = await import('../src/stores/postgres/index.ts');
  const pool = await createPostgresPool(rest[1]!, { maxConnections: 1 });
  const all = await readAllByOffset(createPostgresFailureLog(pool, { schema: rest[2]! }));
  await pool.end();
  records = buildFailureReport(all).totals.records;
  process.stdout.write(`${records}\n`);
} else {
  throw new Error(`usage: report-scale-child.ts cli ARGS… | before sqlite FILE | before postgres URL SCHEMA`);
}
process.stderr.write(`\n${JSON.stringify({ ms: performance.now() - started, maxRssKb: process.resourceUsage().maxRSS, records })}\n`);
