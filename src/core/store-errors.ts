import { classifyError } from './classify-error.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';

/**
 * Driver error codes of a store that is briefly unreachable or busy: SQLite's busy/locked, PostgreSQL's
 * connection, shutdown, serialization and deadlock classes (SQLSTATE 08xxx, 57P0x, 40001, 40P01,
 * 53300), Redis/ioredis connection states.
 */
const TRANSIENT_CODES: ReadonlySet<string> = new Set([
  'SQLITE_BUSY',
  'SQLITE_BUSY_SNAPSHOT',
  'SQLITE_BUSY_TIMEOUT',
  'SQLITE_LOCKED',
  'SQLITE_PROTOCOL',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '57P01',
  '57P02',
  '57P03',
  '40001',
  '40P01',
  '53300',
  'STORE_UNAVAILABLE',
]);

const TRANSIENT_MESSAGES =
  /\b(?:Connection is closed|Connection terminated|Connection ended unexpectedly|connect ECONNREFUSED|Stream isn't writeable|Reached the max retries per request|the database system is (?:starting up|shutting down|in recovery mode|not yet accepting connections)|terminating connection|Client has encountered a connection error|timeout exceeded when trying to connect|Cannot use a pool after calling end|database is locked|Redis is loading|LOADING Redis|READONLY You can't write against a read only replica)\b/i;

/**
 * Whether a failure of `handleMessage` was a store outage (unreachable, restarting, busy, a
 * serialization conflict) rather than something about the message: such a failure does not count
 * toward a message's delivery bound, so an outage never dead-letters healthy messages. Never throws.
 */
export function isTransientStoreError(error: unknown): boolean {
  try {
    let current: unknown = error;
    for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
      const code = (current as { code?: unknown }).code;
      if (typeof code === 'string' && TRANSIENT_CODES.has(code)) return true;
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
