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
    ['deep in the cause chain', new Error('write failed', { cause: new Error('x', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }) })],
  ])('%s is an outage: not counted toward the delivery bound', (_name, error) => {
    expect(isTransientStoreError(error)).toBe(true);
  });

  it.each([
    ['a bug', new TypeError('Do not know how to serialize a BigInt')],
    ['data the store refuses (22P05)', Object.assign(new Error('unsupported Unicode escape sequence'), { code: '22P05' })],
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
