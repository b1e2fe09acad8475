/**
 * One contract for every FailureLog backend (memory, SQLite), and the recorder that feeds it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FailureLog, FailureLogRecord } from '../src/ground/ports/failure-log.ts';
import { createToolRuntime, defineTool, ToolError } from '../src/index.ts';
import { createFailureRecorder, readAllFailures } from '../src/observability/index.ts';
import { createMemoryFailureLog } from '../src/stores/memory/memory-failure-log.ts';
import { createSqliteStores } from '../src/stores/sqlite/sqlite-stores.ts';
import { createSqliteFailureLog, openSqliteFailureLog } from '../src/stores/sqlite/sqlite-failure-log.ts';

const directory = mkdtempSync(join(tmpdir(), 'toolrun-failure-log-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function failure(index: number): FailureLogRecord {
  return {
    kind: 'tool-failure',
    at: new Date(Date.UTC(2024, 4, 15, 15, 0, index)).toISOString(),
    toolName: index % 2 === 0 ? 'book_reservation' : 'update_reservation_flights',
    runId: `run_${index}`,
    sessionId: 's',
    traceId: 't'.repeat(32),
    callId: `call_${index}`,
    stepIndex: index,
    type: 'logic',
    code: 'PRECONDITION_FAILED',
    message: `flight HAT${index} not available on date 2024-05-20`,
    fields: [{ path: '/flights/0/date', problem: 'format', expected: 'YYYY-MM-DD', received: '"5/20"' }],
    attempts: 1,
    durationMs: 12,
  };
}

const opened: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  for (const stores of opened) await stores.close();
});
let databases = 0;
function sqliteLog(): FailureLog {
  databases += 1;
  const stores = createSqliteStores({ path: join(directory, `log-${databases}.db`) });
  opened.push(stores);
  return createSqliteFailureLog(stores.database);
}

const backends: Array<[string, () => FailureLog]> = [
  ['memory', () => createMemoryFailureLog()],
  ['sqlite', sqliteLog],
];

describe.each(backends)('FailureLog contract: %s', (_name, create) => {
  it('keeps every appended record, in order, as JSON copies', async () => {
    const log = create();
    const records = Array.from({ length: 25 }, (_unused, index) => failure(index));
    await Promise.all(records.map((record) => log.append(record)));
    expect(await log.size()).toBe(25);
    expect(await log.list()).toEqual(records);
    const listed = await log.list({ limit: 1 });
    (listed[0] as { toolName: string }).toolName = 'mutated';
    expect((await log.list({ limit: 1 }))[0]!.toolName).toBe('book_reservation');
  });

  it('pages with limit and offset', async () => {
    const log = create();
    for (let index = 0; index < 7; index += 1) await log.append(failure(index));
    expect((await log.list({ limit: 3, offset: 2 })).map((record) => record.at)).toEqual([failure(2).at, failure(3).at, failure(4).at]);
    expect(await log.list({ offset: 7 })).toEqual([]);
    expect(await readAllFailures(log, 2)).toHaveLength(7);
  });

  it('stores the three kinds of records', async () => {
    const log = create();
    const recovery: FailureLogRecord = {
      kind: 'recovery',
      at: '2024-05-15T15:00:00.000Z',
      toolName: 'book_reservation',
      runId: 'r',
      sessionId: 's',
      recoveredWith: 'search_direct_flight',
      failedAtStep: 1,
      recoveredAtStep: 3,
      rounds: 2,
      failures: 2,
    };
    const trip: FailureLogRecord = {
      kind: 'breaker-open',
      at: '2024-05-15T15:00:01.000Z',
      toolName: 'book_reservation',
      runId: null,
      sessionId: null,
      scope: 'shared',
    };
    await log.append(recovery);
    await log.append(trip);
    expect(await log.list()).toEqual([recovery, trip]);
  });
});

describe('SQLite failure log', () => {
  it('is shared by every connection to the file, and survives reopening', async () => {
    const path = join(directory, 'shared.db');
    const stores = createSqliteStores({ path });
    const writer = createSqliteFailureLog(stores.database);
    await writer.append(failure(1));
    const reader = openSqliteFailureLog({ path });
    await writer.append(failure(2));
    expect(await reader.size()).toBe(2);
    reader.close();
    await stores.close();
    const reopened = openSqliteFailureLog({ path });
    expect(await reopened.list()).toEqual([failure(1), failure(2)]);
    reopened.close();
  });
});

describe('the memory failure log bound', () => {
  it('drops the oldest records beyond maxRecords and counts them', async () => {
    const log = createMemoryFailureLog({ maxRecords: 4 });
    for (let index = 0; index < 10; index += 1) await log.append(failure(index));
    expect(await log.size()).toBe(4);
    expect((await log.list()).map((record) => record.at)).toEqual([6, 7, 8, 9].map((index) => failure(index).at));
    expect(log.dropped()).toBe(6);
  });
});

describe('the failure recorder', () => {
  it('appends one redacted, bounded record per failed call and nothing for successes; append errors go to onError', async () => {
    const log = createMemoryFailureLog();
    const errors: unknown[] = [];
    const recorder = createFailureRecorder({ failureLog: log, onError: (error) => errors.push(error) });
    const tool = defineTool({
      name: 'send_certificate',
      description: 'Sends a certificate',
      inputSchema: { type: 'object', properties: { user_id: { type: 'string' }, amount: { type: 'integer', minimum: 1 } }, required: ['user_id'] },
      execute: ({ user_id }) => {
        if (user_id === 'ghost') throw new ToolError({ kind: 'not_found', message: 'user ghost (ghost@example.com) not found' });
        return 'sent';
      },
    });
    const runtime = createToolRuntime({ tools: [tool], onCallEnd: recorder.onCallEnd });
    await runtime.run({ name: 'send_certificate', args: { user_id: 'mia_li_3668', amount: 50 } });
    await runtime.run({ name: 'send_certificate', args: { user_id: 'ghost' } });
    await runtime.run({ name: 'send_certificate', args: { user_id: 'mia_li_3668', amount: 0 } });
    await recorder.flush();
    const records = await log.list();
    expect(records.map((record) => (record.kind === 'tool-failure' ? [record.code, record.type, record.stepIndex] : record.kind))).toEqual([
      ['NOT_FOUND', 'logic', null],
      ['OUT_OF_RANGE', 'invalid_parameter', null],
    ]);
    expect(records[0]).toMatchObject({ toolName: 'send_certificate', message: 'user ghost (***) not found', fields: [], attempts: 1 });
    expect(records[1]).toMatchObject({ fields: [{ path: '/amount', problem: 'range', received: '0' }], attempts: 0 });
    expect(JSON.stringify(records)).not.toContain('mia_li_3668');
    expect(errors).toEqual([]);

    const broken = createFailureRecorder({
      failureLog: { append: async () => Promise.reject(new Error('disk full')), list: async () => [], size: async () => 0 },
      onError: (error) => errors.push(error),
    });
    broken.onCallEnd(await runtime.execute({ name: 'send_certificate', args: { user_id: 'ghost' } }));
    await broken.flush();
    expect(errors.map(String)).toEqual(['Error: disk full']);
  });
});
