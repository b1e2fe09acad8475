import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FailureLog, FailureLogRecord, ToolFailureLogRecord } from '../../ground/ports/failure-log.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';

/** What a failure-log backend's factory hands the contract suite for one test. */
export interface FailureLogContractHarness {
  /** A fresh, empty failure log. */
  log: FailureLog;
  /** Closes the log and removes whatever the factory created (files, schemas). */
  cleanup(): Promise<void>;
}

/** Builds a fresh failure log; called once before every test of {@link describeFailureLogContract}. */
export type MakeFailureLog = () => Promise<FailureLogContractHarness>;

function failure(index: number): ToolFailureLogRecord {
  return {
    kind: 'tool-failure',
    at: new Date(Date.UTC(2024, 4, 15, 15, 0, 0, index)).toISOString(),
    toolName: index % 2 === 0 ? 'book_reservation' : 'update_reservation_flights',
    runId: `run_${index}`,
    sessionId: index % 3 === 0 ? null : 's',
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

async function rejection(promise: Promise<unknown>): Promise<ToolrunError> {
  try {
    await promise;
  } catch (error) {
    if (ToolrunError.is(error)) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

/**
 * Contract of a `FailureLog` with keyset paging (`listPage`): every record kept in order of arrival
 * and read back as an exact copy, `list` paging by `limit`/`offset`, `listPage` reading the same
 * records page by page with a cursor that also picks up records appended later, `findByTraceId`
 * giving the newest tool failure of a trace id, and the refusal of a bad `limit` or cursor. Registers a vitest `describe` named `FailureLog contract: <name>`.
 */
export function describeFailureLogContract(name: string, makeLog: MakeFailureLog): void {
  describe(`FailureLog contract: ${name}`, () => {
    let current: FailureLogContractHarness | undefined;
    beforeEach(async () => {
      current = await makeLog();
    });
    afterEach(async () => {
      const harness = current;
      current = undefined;
      await harness?.cleanup();
    });
    const log = () => {
      if (current === undefined) throw new Error('the failure log is only available inside a test');
      return current.log;
    };

    it('keeps every appended record, in order of arrival, as exact copies', async () => {
      const records = Array.from({ length: 25 }, (_unused, index) => failure(index));
      for (const record of records) await log().append(record);
      expect(await log().size()).toBe(25);
      expect(await log().list()).toEqual(records);
      const listed = await log().list({ limit: 1 });
      (listed[0] as { toolName: string }).toolName = 'mutated';
      expect((await log().list({ limit: 1 }))[0]!.toolName).toBe('book_reservation');
    });

    it('keeps every record of concurrent appends', async () => {
      const records = Array.from({ length: 40 }, (_unused, index) => failure(index));
      await Promise.all(records.map((record) => log().append(record)));
      expect(await log().size()).toBe(40);
      const listed = await log().list();
      expect(listed).toHaveLength(40);
      expect(new Set(listed.map((record) => (record as { callId: string }).callId))).toEqual(
        new Set(records.map((record) => (record as { callId: string }).callId)),
      );
    });

    it('stores the three kinds of records, and texts no SQL column can hold, exactly', async () => {
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
        toolName: 'book\u0000ing',
        runId: null,
        sessionId: null,
        scope: 'shared',
      };
      const odd: FailureLogRecord = { ...failure(1), toolName: 'lone \ud800 surrogate', runId: 'run\u0000nul', message: 'ü東 \u0001 😀' };
      for (const record of [recovery, trip, odd]) await log().append(record);
      expect(await log().list()).toEqual([recovery, trip, odd]);
      expect((await log().listPage!({ limit: 10 })).records).toEqual([recovery, trip, odd]);
    });

    it('pages with limit and offset', async () => {
      for (let index = 0; index < 7; index += 1) await log().append(failure(index));
      expect((await log().list({ limit: 3, offset: 2 })).map((record) => record.at)).toEqual([failure(2).at, failure(3).at, failure(4).at]);
      expect(await log().list({ offset: 7 })).toEqual([]);
      expect(await log().list({ limit: 0 })).toEqual([]);
    });

    it('pages by cursor: every record once, in order, the same as list()', async () => {
      expect(log().listPage).toBeTypeOf('function');
      for (let index = 0; index < 23; index += 1) await log().append(failure(index));
      const read: FailureLogRecord[] = [];
      const sizes: number[] = [];
      let after: string | null = null;
      for (;;) {
        const page = await log().listPage!({ limit: 5, after });
        sizes.push(page.records.length);
        read.push(...page.records);
        expect(typeof page.next).toBe('string');
        if (page.records.length < 5) break;
        after = page.next;
      }
      expect(sizes).toEqual([5, 5, 5, 5, 3]);
      expect(read).toEqual(await log().list());
    });

    it('a cursor goes on from where it ended: records appended later come on the next read, none twice', async () => {
      expect(await log().listPage!({ limit: 10 })).toEqual({ records: [], next: null });
      for (let index = 0; index < 3; index += 1) await log().append(failure(index));
      const first = await log().listPage!({ limit: 10 });
      expect(first.records).toEqual([failure(0), failure(1), failure(2)]);
      const empty = await log().listPage!({ limit: 10, after: first.next });
      expect(empty).toEqual({ records: [], next: first.next });
      await log().append(failure(3));
      await log().append(failure(4));
      const later = await log().listPage!({ limit: 10, after: empty.next });
      expect(later.records).toEqual([failure(3), failure(4)]);
      expect(later.next).not.toBe(first.next);
    });

    it('finds the newest tool failure of a trace id, as an exact copy, and nothing for an unknown one', async () => {
      expect(log().findByTraceId).toBeTypeOf('function');
      expect(await log().findByTraceId!('t'.repeat(32))).toBeUndefined();
      const traced = (index: number, traceId: string): ToolFailureLogRecord => ({ ...failure(index), traceId });
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
      // a message that looks like a traceId member, and trace ids no SQL column or json cast can hold
      const decoy: ToolFailureLogRecord = { ...traced(1, 'a'.repeat(32)), message: 'saw "traceId":"b" and {"traceId":"c"} \\ \u0000' };
      const odd = ['nul\u0000id', 'lone \ud800 surrogate', 'quote " and \\ back', 'ü東😀'];
      await log().append(traced(0, 'a'.repeat(32)));
      await log().append(recovery);
      await log().append(decoy);
      await log().append(traced(2, 'b'.repeat(32)));
      for (const [index, traceId] of odd.entries()) await log().append(traced(10 + index, traceId));
      await log().append(traced(3, 'b'.repeat(32)));
      expect(await log().findByTraceId!('a'.repeat(32))).toEqual(decoy);
      expect(await log().findByTraceId!('b'.repeat(32))).toEqual(traced(3, 'b'.repeat(32)));
      for (const [index, traceId] of odd.entries()) expect(await log().findByTraceId!(traceId)).toEqual(traced(10 + index, traceId));
      for (const unknown of ['b', 'c', 'a'.repeat(31), 'A'.repeat(32), '', 'nul']) expect(await log().findByTraceId!(unknown)).toBeUndefined();
      const found = await log().findByTraceId!('b'.repeat(32));
      found!.toolName = 'mutated';
      expect((await log().findByTraceId!('b'.repeat(32)))!.toolName).toBe('update_reservation_flights');
    });

    it('refuses a limit that is not an integer ≥ 1 and a cursor it did not make', async () => {
      await log().append(failure(0));
      for (const limit of [0, -1, 1.5, Number.NaN]) expect((await rejection(log().listPage!({ limit }))).code).toBe('INVALID_OPTIONS');
      for (const after of ['x', '-1', '1e3', ' 1', '']) expect((await rejection(log().listPage!({ limit: 1, after }))).code).toBe('INVALID_OPTIONS');
    });
  });
}
