import { describe, expect, it } from 'vitest';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { isTransientStoreError } from './store-errors.ts';

describe('isTransientStoreError', () => {
  it.each([
    ['connection refused', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['PostgreSQL shutting down (57P01)', Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })],
    ['a serialization conflict (40001)', Object.assign(new Error('could not serialize access'), { code: '40001' })],
    ['pg pool after a restart', new Error('Client has encountered a connection error and is not queryable')],
    ['SQLite busy', Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })],
    ['ioredis closed', new Error('Connection is closed.')],
    ['a store error wrapped as a cause', new ToolrunError('STORE_UNAVAILABLE', 'cannot reach the store')],
    ['SQLite: the disk full', Object.assign(new Error('database or disk is full'), { name: 'SqliteError', code: 'SQLITE_FULL' })],
    ['SQLite: a write I/O error', Object.assign(new Error('disk I/O error'), { name: 'SqliteError', code: 'SQLITE_IOERR_WRITE' })],
    ['SQLite: an fsync I/O error', Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_FSYNC' })],
    ['SQLite: a journal that cannot be created', Object.assign(new Error('unable to open database file'), { code: 'SQLITE_CANTOPEN' })],
    ['PostgreSQL: disk full (53100)', Object.assign(new Error('could not extend file "base/16384/16385": No space left on device'), { code: '53100' })],
    ['PostgreSQL: insufficient resources (53000)', Object.assign(new Error('out of shared memory'), { code: '53000' })],
    ['PostgreSQL: out of memory (53200)', Object.assign(new Error('out of memory'), { code: '53200' })],
    ['PostgreSQL: too many connections (53300)', Object.assign(new Error('sorry, too many clients already'), { code: '53300' })],
    ['PostgreSQL: an I/O error (58030)', Object.assign(new Error('could not read block 0 in file "base/1/2": Input/output error'), { code: '58030' })],
    ['PostgreSQL: the relation cache file (XX000)', Object.assign(new Error('could not write init file'), { code: 'XX000', severity: 'FATAL' })],
    ['PostgreSQL: a PANIC on a WAL write', new Error('could not write to file "pg_wal/xlogtemp.41": No space left on device')],
    ['Redis: maxmemory reached', Object.assign(new Error("OOM command not allowed when used memory > 'maxmemory'."), { name: 'ReplyError' })],
    [
      'Redis: an RDB snapshot that cannot be saved',
      Object.assign(new Error("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk."), { name: 'ReplyError' }),
    ],
    [
      'Redis: MISCONF from inside a script',
      Object.assign(new Error('ERR Error running script (call to f_1234): @user_script:12: -MISCONF Redis is configured to save RDB snapshots'), {
        name: 'ReplyError',
      }),
    ],
    ['a file system full (ENOSPC)', Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 })],
    ['deep in the cause chain', new Error('write failed', { cause: new Error('x', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }) })],
  ])('%s is an outage: not counted toward the delivery bound', (_name, error) => {
    expect(isTransientStoreError(error)).toBe(true);
  });

  it.each([
    ['a bug', new TypeError('Do not know how to serialize a BigInt')],
    ['data the store refuses (22P05)', Object.assign(new Error('unsupported Unicode escape sequence'), { code: '22P05' })],
    ['PostgreSQL: a missing data file (58P01)', Object.assign(new Error('could not open file "base/1/2": No such file or directory'), { code: '58P01' })],
    ['PostgreSQL: a setting too low (53400)', Object.assign(new Error('configuration limit exceeded'), { code: '53400' })],
    ['SQLite: a constraint', Object.assign(new Error('UNIQUE constraint failed: t.x'), { code: 'SQLITE_CONSTRAINT_UNIQUE' })],
    ['SQLite: a damaged file', Object.assign(new Error('database disk image is malformed'), { code: 'SQLITE_CORRUPT' })],
    ['a tool message that mentions OOM in passing', new Error('the OOMKilled pod')],
    ['a programmer error', new ToolrunError('INVALID_OPTIONS', 'bad')],
    ['a string', 'boom'],
    [
      'a getter that throws',
      new Proxy(
        {},
        {
          get: () => {
            throw new Error('no');
          },
        },
      ),
    ],
  ])('%s counts toward the bound', (_name, error) => {
    expect(isTransientStoreError(error)).toBe(false);
  });
});
