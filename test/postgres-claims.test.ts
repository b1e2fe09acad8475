/**
 * The PostgreSQL claim store's two cheap paths: `release` commits asynchronously for its own
 * transaction only (the connection goes back to the pool committing synchronously), and `acquire`
 * sweeps ended claims at most once per second of the clock, the other acquisitions being the
 * upsert alone.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStores } from '../src/stores/postgres/index.ts';
import { createFakeClock } from '../src/testing/fake-clock.ts';
import { createTestPool, dropSchema, uniqueName } from './fixtures/distributed-services.ts';

const admin = createTestPool({ max: 2 });
const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) await dropSchema(admin, schema);
  await admin.end();
});

describe('PostgreSQL claims', () => {
  it('releases without leaving the connection committing asynchronously, and the release is seen at once by another pool', async () => {
    // one connection, so the statement after the release runs on the connection the release used
    const pool = createTestPool({ max: 1 });
    const schema = uniqueName('toolrun_pgclaims_');
    schemas.push(schema);
    const stores = await createPostgresStores({ pool, schema });
    const other = await createPostgresStores({ pool: admin, schema });
    try {
      expect(await stores.claims.acquire('run:a', 'one', 60_000)).toBe(true);
      expect(await other.claims.acquire('run:a', 'two', 60_000)).toBe(false);
      expect(await stores.claims.release('run:a', 'one')).toBe(true);
      const { rows } = await pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
      expect(rows[0]!.synchronous_commit).toBe('on');
      expect(await other.claims.acquire('run:a', 'two', 60_000)).toBe(true);
      // a holder that does not hold the key releases nothing
      expect(await stores.claims.release('run:a', 'one')).toBe(false);
      expect((await stores.claims.get('run:a'))?.holder).toBe('two');
    } finally {
      await stores.close();
      await other.close();
      await pool.end();
    }
  });

  it('sweeps ended claims on the first acquire and then at most once per second of the clock', async () => {
    const schema = uniqueName('toolrun_pgclaims_');
    schemas.push(schema);
    const clock = createFakeClock();
    const stores = await createPostgresStores({ pool: admin, schema, clock });
    const countRows = async () => Number((await admin.query<{ count: string }>(`SELECT COUNT(*) AS count FROM "${schema}".claims`)).rows[0]!.count);
    try {
      expect(await stores.claims.acquire('run:first', 'worker', 10)).toBe(true); // sweeps (nothing yet)
      for (let index = 0; index < 5; index++) expect(await stores.claims.acquire(`run:crashed-${index}`, 'crashed', 10)).toBe(true);
      await clock.advance(500);
      // the leases ended, but the last sweep was 500 ms ago: the rows stay (and the keys are free)
      expect(await stores.claims.acquire('run:second', 'worker', 10_000)).toBe(true);
      expect(await countRows()).toBe(7);
      expect(await stores.claims.acquire('run:crashed-0', 'worker', 10_000)).toBe(true);
      await clock.advance(500);
      // a second after the last sweep: ended claims of other keys are deleted, live ones stay
      expect(await stores.claims.acquire('run:third', 'worker', 10_000)).toBe(true);
      const { rows } = await admin.query<{ key: string }>(`SELECT key FROM "${schema}".claims ORDER BY key`);
      expect(rows.map((row) => row.key)).toEqual(['run:crashed-0', 'run:second', 'run:third']);
    } finally {
      await stores.close();
    }
  });
});
