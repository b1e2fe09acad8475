import { classifyError } from './classify-error.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';

/**
 * Driver error codes of a store that is out for a while, not refusing the data it was sent:
 *
 * - SQLite: busy and locked (another connection holds the lock past the busy timeout), the disk
 *   full (`SQLITE_FULL`), an I/O error of the operating system (`SQLITE_IOERR` and its extended
 *   codes, matched by prefix below), out of memory (`SQLITE_NOMEM`), and `SQLITE_CANTOPEN` (a
 *   journal, WAL or temporary file that cannot be created: on an open database, a full or failing
 *   file system). A database file that cannot be opened at all fails when the stores are created,
 *   not here.
 * - PostgreSQL SQLSTATEs: connection exceptions (08xxx), the insufficient-resources class (53000
 *   insufficient_resources, 53100 disk_full, 53200 out_of_memory, 53300 too_many_connections; not
 *   53400 configuration_limit_exceeded, a setting that does not change by waiting), 58030 io_error,
 *   shutdown and restart (57P01, 57P02, 57P03, 57P05), and the conflicts that a retry resolves
 *   (40001 serialization_failure, 40P01 deadlock_detected, 55P03 lock_not_available). Not 58P01
 *   undefined_file: a missing data file is damage, which no wait repairs.
 * - Node's errno codes of a file system that is full or failing, or out of descriptors (`ENOSPC`,
 *   `EDQUOT`, `EIO`, `EMFILE`, `ENFILE`).
 * - `STORE_UNAVAILABLE`: a store of one's own saying so.
 */
const TRANSIENT_CODES: ReadonlySet<string> = new Set([
  'SQLITE_BUSY',
  'SQLITE_BUSY_RECOVERY',
  'SQLITE_BUSY_SNAPSHOT',
  'SQLITE_BUSY_TIMEOUT',
  'SQLITE_LOCKED',
  'SQLITE_LOCKED_SHAREDCACHE',
  'SQLITE_PROTOCOL',
  'SQLITE_FULL',
  'SQLITE_NOMEM',
  'SQLITE_CANTOPEN',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '08007',
  '53000',
  '53100',
  '53200',
  '53300',
  '58030',
  '57P01',
  '57P02',
  '57P03',
  '57P05',
  '40001',
  '40P01',
  '55P03',
  'ENOSPC',
  'EDQUOT',
  'EIO',
  'EMFILE',
  'ENFILE',
  'STORE_UNAVAILABLE',
]);

/**
 * Messages of the same outages where no code says it: connections lost or refused, a server
 * starting, stopping or recovering (after a PANIC on a full disk PostgreSQL restarts, and a backend
 * that cannot write its relation cache file says "could not write init file"), a full disk or an
 * I/O error in a message of its own, and the Redis replies of a server that refuses writes for a
 * while: `OOM` (maxmemory reached under `noeviction`), `MISCONF` (an RDB snapshot that cannot be
 * saved, with stop-writes-on-bgsave-error), `LOADING`, `BUSY` (a script running), `TRYAGAIN`,
 * `CLUSTERDOWN`, `MASTERDOWN`, `READONLY` — at the start of the reply or, from inside a script, after
 * a `-`.
 */
const TRANSIENT_MESSAGES = new RegExp(
  [
    String.raw`\b(?:Connection is closed|Connection terminated|Connection ended unexpectedly|connect ECONNREFUSED|Stream isn't writeable|Reached the max retries per request`,
    String.raw`the database system is (?:starting up|shutting down|in recovery mode|not yet accepting connections)|terminating connection`,
    String.raw`Client has encountered a connection error|timeout exceeded when trying to connect|Cannot use a pool after calling end|database is locked`,
    String.raw`Redis is loading|LOADING Redis|READONLY You can't write against a read only replica`,
    String.raw`No space left on device|Disk quota exceeded|could not write init file|database or disk is full|disk I/O error|Input\/output error)\b`,
    String.raw`(?:^|[\s:-])(?:OOM command not allowed|MISCONF |BUSY Redis is busy|TRYAGAIN |CLUSTERDOWN |MASTERDOWN |NOREPLICAS )`,
  ].join('|'),
  'i',
);

/** Whether `code` names an outage: one of {@link TRANSIENT_CODES}, or an extended `SQLITE_IOERR_*` code. */
function isTransientCode(code: string): boolean {
  return TRANSIENT_CODES.has(code) || code === 'SQLITE_IOERR' || code.startsWith('SQLITE_IOERR_');
}

/**
 * Whether a failure of `handleMessage` was a store outage (unreachable, restarting, busy, a
 * serialization conflict, a full disk, an I/O error, out of memory) rather than something about the
 * message: such a failure does not count toward a message's delivery bound, so an outage never
 * dead-letters healthy messages, and a checkpoint write that fails on it is sent again. Reads the
 * error's `code`, `message` and `name`, then its `cause`s (5 deep). Never throws.
 */
export function isTransientStoreError(error: unknown): boolean {
  try {
    let current: unknown = error;
    for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
      const code = (current as { code?: unknown }).code;
      if (typeof code === 'string' && isTransientCode(code)) return true;
      const message = (current as { message?: unknown }).message;
      if (typeof message === 'string' && TRANSIENT_MESSAGES.test(message.slice(0, 512))) return true;
      const name = (current as { name?: unknown }).name;
      if (name === 'MaxRetriesPerRequestError') return true;
      current = (current as { cause?: unknown }).cause;
    }
    if (ToolrunError.is(error)) return false;
    const classified = classifyError(error, { nowMs: 0 });
    return classified.transient && (classified.kind === 'network' || classified.kind === 'timeout');
  } catch {
    return false;
  }
}
