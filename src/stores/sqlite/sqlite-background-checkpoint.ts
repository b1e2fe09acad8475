import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Database } from 'better-sqlite3';

/** How the background checkpoint runs; see {@link startSqliteBackgroundCheckpoint}. */
export interface SqliteBackgroundCheckpointOptions {
  /** The database file (an ordinary path, not `':memory:'` or a `file:` URI). */
  path: string;
  /** The busy timeout of the thread's own connection, in ms (for opening it). */
  busyTimeoutMs: number;
  /** Shortest time between two checkpoints while the WAL grows, in ms. @defaultValue 25 */
  minIntervalMs?: number;
  /** Longest time between two looks at an idle WAL, in ms. @defaultValue 1000 */
  maxIntervalMs?: number;
  /**
   * The WAL size, in pages, at which the writing connection checkpoints by itself (the bound of
   * the WAL while the thread lags, e.g. under a load that never pauses). @defaultValue 4000
   */
  fallbackPages?: number;
}

/** A running background checkpoint. */
export interface SqliteBackgroundCheckpoint {
  /** Checkpoints the thread ran that copied frames (for tests and inspection). */
  readonly checkpoints: () => number;
  /** Whether the thread runs (false once it failed or stopped: the connection checkpoints by itself). */
  readonly running: () => boolean;
  /** Stops the thread and waits for it to close its connection (bounded: the thread is terminated after 5 s). */
  stop(): Promise<void>;
}

/** SQLite's automatic checkpoint threshold, in pages: what a connection does without the thread. */
const SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES = 1000;
const STOP_TIMEOUT_MS = 5_000;

// The thread's code, CommonJS (an `eval` worker needs no file of its own, so it runs the same from
// the sources and from the build). control[0]: 1 asks it to stop; control[1]: checkpoints that copied frames.
const THREAD_SOURCE = `
  const { workerData } = require('node:worker_threads');
  const Database = require(workerData.driver);
  const control = new Int32Array(workerData.control);
  const database = new Database(workerData.path, { fileMustExist: true, timeout: workerData.busyTimeoutMs });
  let waitMs = workerData.minIntervalMs;
  let last = '';
  try {
    while (Atomics.load(control, 0) === 0) {
      Atomics.wait(control, 0, 0, waitMs);
      if (Atomics.load(control, 0) !== 0) break;
      let state = last;
      try {
        // PASSIVE: copies what it can without waiting for (or blocking) any reader or writer
        const row = database.pragma('wal_checkpoint(PASSIVE)')[0];
        state = row.log + ':' + row.checkpointed;
        if (row.checkpointed > 0 && state !== last) Atomics.add(control, 1, 1);
      } catch {
        // busy or locked: the next look tries again
      }
      waitMs = state === last ? Math.min(workerData.maxIntervalMs, waitMs * 2) : workerData.minIntervalMs;
      last = state;
    }
  } finally {
    database.close();
  }
`;

/**
 * Moves the WAL checkpoints of `database` (copying committed pages into the database file and
 * syncing it: in WAL mode with `synchronous = NORMAL`, the only fsyncs there are) to a worker thread
 * with a connection of its own, so a commit never waits for a checkpoint. The thread runs SQLite's
 * PASSIVE checkpoint (it waits for and blocks no reader or writer) every `minIntervalMs` while the
 * WAL grows, backing off to `maxIntervalMs` while it does not; the connection's own automatic
 * checkpoint stays on at `fallbackPages`, so the WAL stays bounded when the thread lags, and goes
 * back to SQLite's 1,000 pages when the thread fails or stops. Checkpoints are SQLite's own: a crash
 * at any point loses no committed transaction.
 *
 * The thread is unreferenced (it never keeps the process alive); `stop()` ends it.
 */
export function startSqliteBackgroundCheckpoint(database: Database, options: SqliteBackgroundCheckpointOptions): SqliteBackgroundCheckpoint {
  const control = new Int32Array(new SharedArrayBuffer(8));
  const fallbackPages = Math.max(SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES, Math.trunc(options.fallbackPages ?? 4000));
  let running = true;
  const inline = () => {
    running = false;
    try {
      if (database.open) database.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES}`);
    } catch {
      // the connection is closing or busy: it keeps the fallback bound, which also checkpoints
    }
  };
  const thread = new Worker(THREAD_SOURCE, {
    eval: true,
    workerData: {
      driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      path: options.path,
      busyTimeoutMs: Math.max(0, Math.trunc(options.busyTimeoutMs)),
      minIntervalMs: Math.max(1, Math.trunc(options.minIntervalMs ?? 25)),
      maxIntervalMs: Math.max(1, Math.trunc(options.maxIntervalMs ?? 1000)),
      control: control.buffer,
    },
    stdout: false,
    stderr: false,
  });
  thread.unref();
  const exited = new Promise<void>((resolve) => {
    thread.once('exit', () => {
      inline();
      resolve();
    });
  });
  // a thread that cannot start (no driver in a thread, the file gone) leaves the connection as it was
  thread.on('error', inline);
  database.pragma(`wal_autocheckpoint = ${fallbackPages}`);
  let stopping: Promise<void> | undefined;
  return {
    checkpoints: () => Atomics.load(control, 1),
    running: () => running,
    stop() {
      stopping ??= (async () => {
        Atomics.store(control, 0, 1);
        Atomics.notify(control, 0);
        // referenced while it winds down: the process waits for the connection to close
        thread.ref();
        let timer: ReturnType<typeof setTimeout> | undefined;
        const overrun = new Promise<'overrun'>((resolve) => {
          timer = setTimeout(() => resolve('overrun'), STOP_TIMEOUT_MS);
        });
        if ((await Promise.race([exited, overrun])) === 'overrun') await thread.terminate();
        clearTimeout(timer);
        await exited;
      })();
      return stopping;
    },
  };
}
