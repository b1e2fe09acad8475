import type { Database } from 'better-sqlite3';
import { systemClock, type Clock } from '../../ground/ports/clock.ts';

/**
 * Group commit on one better-sqlite3 connection: writes asked for in the same turn of the event
 * loop share one IMMEDIATE transaction, and each caller's promise settles only once that
 * transaction has committed (or failed).
 */
export interface SqliteGroupCommit {
  /**
   * Runs `write` (synchronous statements on the connection, all or nothing) in the next group
   * transaction and resolves with what it returned once that transaction has committed. A `write`
   * that throws is taken out of the group, which is rolled back and committed again without it: the
   * promise of that write rejects with what it threw and none of its statements is kept, the
   * other writes are kept. When the transaction itself cannot begin or commit (the file stays
   * locked past the busy timeout, the disk is full), every write of the group rejects with that
   * error and none of them is kept.
   */
  run<T>(write: () => T): Promise<T>;
  /** Commits the writes asked for so far now, synchronously (before the connection closes). */
  flush(): void;
}

interface Pending {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Writes committed at once after a group of one, before the next waits for a group again to see whether others join it. */
const ALONE_WRITES = 32;

/** The most writes in one group: the rest go in the next one. */
const MAX_GROUP_WRITES = 256;

/**
 * A {@link SqliteGroupCommit} on `database`.
 *
 * The group is committed by `clock.atEndOfTurn` (default the system clock: `setImmediate`), once
 * the promise jobs and I/O callbacks of the current turn have run; with a clock without it, every
 * write commits at once. A worker running many runs at once thus commits
 * the steps, claims and acknowledgements they reach in one turn together, and the cost of a commit
 * (the WAL frames of the pages it changed, most of them shared by the group's rows: the ends of
 * time-ordered indexes, the same table's last leaf) is paid once for the group. Writes run in the
 * order they were asked for, so a later one sees what an earlier one wrote. A group holds at most
 * 256 writes.
 *
 * At a low load the wait buys nothing: after a group of one write (and on a new connection), the
 * next `aloneWrites` (default 32) writes each commit at once in a transaction of their own inside
 * `run` (no turn is waited for) as long as none is waiting; the one after waits for a group again,
 * to see whether others join it.
 */
export function createSqliteGroupCommit(database: Database, options: { aloneWrites?: number; clock?: Clock } = {}): SqliteGroupCommit {
  const aloneWrites = Math.max(0, Math.trunc(options.aloneWrites ?? ALONE_WRITES));
  const clock = options.clock ?? systemClock;
  const scheduleAtEndOfTurn = clock.atEndOfTurn?.bind(clock);
  let pending: Pending[] = [];
  let scheduled = false;
  // writes left to commit at once, without waiting for a turn: a new connection starts alone
  let aloneFor = aloneWrites;

  const single = database.transaction((write: () => unknown) => write());
  // every write of the group straight in one transaction (no savepoints): the first that throws
  // is noted and aborts the group, which is then committed again without it
  let thrown: { index: number; error: unknown } | undefined;
  // named: a crash test recognises the group's transaction by it
  const group = database.transaction(function commitGroup(writes: readonly Pending[], values: unknown[]) {
    for (let index = 0; index < writes.length; index++) {
      try {
        values.push(writes[index]!.write());
      } catch (error) {
        thrown = { index, error };
        throw error;
      }
    }
  });

  const commitAlone = (each: Pending) => {
    let value: unknown;
    try {
      value = single.immediate(each.write);
    } catch (error) {
      each.reject(error);
      return;
    }
    each.resolve(value);
  };

  const commit = (writes: readonly Pending[]) => {
    let rest = writes;
    while (rest.length > 1) {
      const values: unknown[] = [];
      thrown = undefined;
      try {
        group.immediate(rest, values);
      } catch (error) {
        // set by the group's function (the compiler cannot see that it ran)
        const failed = thrown as { index: number; error: unknown } | undefined;
        if (failed === undefined) {
          // the transaction failed, not a write: none is kept
          for (const each of rest) each.reject(error);
          return;
        }
        const { index } = failed;
        rest[index]!.reject(failed.error);
        rest = [...rest.slice(0, index), ...rest.slice(index + 1)];
        continue;
      }
      rest.forEach((each, index) => each.resolve(values[index]));
      return;
    }
    if (rest.length === 1) commitAlone(rest[0]!);
  };

  const flush = () => {
    scheduled = false;
    // a flush already ran (close()), or a scheduled one that cannot be cancelled fires after it
    if (pending.length === 0) return;
    aloneFor = pending.length === 1 ? aloneWrites : 0;
    while (pending.length > 0) {
      const writes = pending.length <= MAX_GROUP_WRITES ? pending : pending.slice(0, MAX_GROUP_WRITES);
      pending = pending.length <= MAX_GROUP_WRITES ? [] : pending.slice(MAX_GROUP_WRITES);
      commit(writes);
    }
  };

  return {
    run<T>(write: () => T): Promise<T> {
      if ((aloneFor > 0 || scheduleAtEndOfTurn === undefined) && pending.length === 0) {
        aloneFor -= 1;
        try {
          return Promise.resolve(single.immediate(write) as T);
        } catch (error) {
          return Promise.reject(error);
        }
      }
      return new Promise<T>((resolve, reject) => {
        pending.push({ write, resolve: resolve as (value: unknown) => void, reject });
        if (!scheduled) {
          scheduled = true;
          scheduleAtEndOfTurn!(flush);
        }
      });
    },
    flush,
  };
}
