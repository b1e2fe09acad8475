/**
 * The PostgreSQL breaker store's reuse of states it read (`breakerMaxStalenessMs`): a breaker check
 * sends no statement while the state it read or wrote last of that key is within the staleness
 * bound; its own writes are seen at once, another process's (and writes by hand) once the bound has
 * passed. Real PostgreSQL.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ToolrunError } from '../src/ground/toolrun-error.ts';
import { migratePostgresSchema } from '../src/stores/postgres/postgres-migrations.ts';
import { createPostgresStores } from '../src/stores/postgres/index.ts';
import type { PostgresPoolLike } from '../src/stores/postgres/postgres-client.ts';
import { createFakeClock } from '../src/testing/fake-clock.ts';
import { createTestPool, dropSchema, uniqueName } from './fixtures/distributed-services.ts';

const admin = createTestPool({ max: 6 });
afterAll(() => admin.end());

/** The statements sent on `admin` through this pool (transactions' included). */
function countingPool(): PostgresPoolLike & { statements: number } {
  const counted = {
    statements: 0,
    query: (...args: Parameters<PostgresPoolLike['query']>) => {
      counted.statements += 1;
      return (admin.query as (...values: unknown[]) => ReturnType<PostgresPoolLike['query']>)(...args);
    },
    connect: async () => {
      const client = await admin.connect();
      return {
        query: (...args: unknown[]) => {
          counted.statements += 1;
          return (client.query as (...values: unknown[]) => ReturnType<PostgresPoolLike['query']>)(...args);
        },
        release: (destroy?: boolean | Error) => client.release(destroy),
      } as Awaited<ReturnType<PostgresPoolLike['connect']>>;
    },
    end: async () => undefined,
  };
  return counted as PostgresPoolLike & { statements: number };
}

/** Two bundles on one schema (two processes), on one fake clock. */
async function twoProcesses(options: { breakerMaxStalenessMs?: number } = {}) {
  const schema = uniqueName('toolrun_breaker_reads_');
  const clock = createFakeClock();
  const left = countingPool();
  const right = countingPool();
  const a = await createPostgresStores({ pool: left, schema, clock, ...options });
  const b = await createPostgresStores({ pool: right, schema, clock, ...options });
  left.statements = 0;
  right.statements = 0;
  return {
    schema,
    clock,
    a,
    b,
    left,
    close: async () => {
      await a.close();
      await b.close();
      await dropSchema(admin, schema);
    },
  };
}

describe('PostgreSQL breaker reads', () => {
  it('answers a check again without a statement within the staleness bound, with a fresh copy each time', async () => {
    const { a, left, close } = await twoProcesses();
    try {
      await a.breakers.update('search', () => ({ state: 'closed', failures: 0 }));
      expect(await a.breakers.get('search')).toEqual({ state: 'closed', failures: 0 });
      const after = left.statements;
      const first = (await a.breakers.get('search')) as { failures: number };
      first.failures = 99;
      expect(await a.breakers.get('search')).toEqual({ state: 'closed', failures: 0 });
      expect(await a.breakers.get('search')).not.toBe(await a.breakers.get('search'));
      expect(left.statements).toBe(after);
      // a key never written is kept as "no record" too
      expect(await a.breakers.get('never')).toBeUndefined();
      const afterMissing = left.statements;
      expect(await a.breakers.get('never')).toBeUndefined();
      expect(left.statements).toBe(afterMissing);
    } finally {
      await close();
    }
  });

  it("sees its own write at once, another process's after the staleness bound", async () => {
    const { a, b, clock, close } = await twoProcesses();
    try {
      expect(await a.breakers.get('search')).toBeUndefined();
      await a.breakers.update('search', () => ({ state: 'open' }));
      expect(await a.breakers.get('search')).toEqual({ state: 'open' });

      await b.breakers.update('search', () => ({ state: 'half-open' }));
      // the clock stood still: a's last read stands (at most 50 ms old)
      expect(await a.breakers.get('search')).toEqual({ state: 'open' });
      await clock.advance(50);
      expect(await a.breakers.get('search')).toEqual({ state: 'open' });
      await clock.advance(1);
      expect(await a.breakers.get('search')).toEqual({ state: 'half-open' });
      // a clock that steps back makes the kept state stale
      await b.breakers.update('search', () => ({ state: 'closed' }));
      clock.set(clock.now() - 1_000);
      expect(await a.breakers.get('search')).toEqual({ state: 'closed' });
    } finally {
      await close();
    }
  });

  it('sees writes by hand, and rows deleted, once the staleness bound has passed', async () => {
    const { schema, a, clock, close } = await twoProcesses();
    try {
      await a.breakers.update('search', () => ({ state: 'open' }));
      expect(await a.breakers.get('search')).toEqual({ state: 'open' });
      await admin.query(`UPDATE "${schema}".breakers SET state = '{"state":"closed"}' WHERE key = 'search'`);
      await clock.advance(51);
      expect(await a.breakers.get('search')).toEqual({ state: 'closed' });
      await admin.query(`DELETE FROM "${schema}".breakers`);
      await clock.advance(51);
      expect(await a.breakers.get('search')).toBeUndefined();
      await admin.query(`INSERT INTO "${schema}".breakers (key, state, updated_at_ms) VALUES ('search', '{"state":"open"}', 0)`);
      await clock.advance(51);
      expect(await a.breakers.get('search')).toEqual({ state: 'open' });
    } finally {
      await close();
    }
  });

  it('reads at every check with breakerMaxStalenessMs 0, and refuses a bound that is not a finite number ≥ 0 before it connects', async () => {
    const { a, left, close } = await twoProcesses({ breakerMaxStalenessMs: 0 });
    try {
      await a.breakers.get('search');
      const after = left.statements;
      await a.breakers.get('search');
      await a.breakers.get('search');
      expect(left.statements).toBe(after + 2);
    } finally {
      await close();
    }
    for (const bound of [-1, Number.NaN, Number.POSITIVE_INFINITY, '5' as unknown as number]) {
      const pool = countingPool();
      const error = await createPostgresStores({ pool, schema: 'never_created', breakerMaxStalenessMs: bound }).catch((thrown: unknown) => thrown);
      expect(ToolrunError.is(error) && error.code).toBe('INVALID_OPTIONS');
      expect(pool.statements).toBe(0);
    }
  });

  it('never answers a check with a state older than a write that committed more than the bound before it (concurrent checks and writes)', async () => {
    const { a, b, clock, close } = await twoProcesses();
    try {
      for (let round = 1; round <= 30; round++) {
        // checks in flight while the other process writes: either answer is right for them
        const during = Promise.all([
          a.breakers.get('counter'),
          b.breakers.update<number>('counter', (current) => (current ?? 0) + 1),
          a.breakers.get('counter'),
        ]);
        await during;
        // once the bound has passed after the write committed, a sees it
        await clock.advance(51);
        expect(await a.breakers.get('counter')).toBe(round);
        // and a's own write at once, whatever it kept
        await a.breakers.update<number>('other', () => round);
        expect(await a.breakers.get('other')).toBe(round);
      }
    } finally {
      await close();
    }
  });

  it('opens a schema an earlier version wrote: its breakers are read as they are', async () => {
    const schema = uniqueName('toolrun_breaker_reads_');
    const clock = createFakeClock();
    try {
      await migratePostgresSchema(admin, schema, clock.now());
      await admin.query(`INSERT INTO "${schema}".breakers (key, state, updated_at_ms) VALUES ('search', '{"state":"open","openings":1}', 0)`);
      const stores = await createPostgresStores({ pool: admin, schema, clock });
      try {
        expect(await stores.breakers.get('search')).toEqual({ state: 'open', openings: 1 });
        await stores.breakers.update('search', () => ({ state: 'closed', openings: 1 }));
        expect(await stores.breakers.get('search')).toEqual({ state: 'closed', openings: 1 });
      } finally {
        await stores.close();
      }
    } finally {
      await dropSchema(admin, schema);
    }
  });

  it('lets a transaction by hand lock a breaker before writing it while the store updates it, and writers of other keys go on meanwhile', async () => {
    const { schema, a, b, clock, close } = await twoProcesses();
    try {
      await a.breakers.update('search', () => ({ state: 'closed' }));
      const hand = await admin.connect();
      try {
        await hand.query('BEGIN');
        await hand.query(`SELECT state FROM "${schema}".breakers WHERE key = 'search' FOR UPDATE`);
        const storeUpdate = b.breakers.update('search', () => ({ state: 'open' }));
        // a writer of another key does not wait for the open transaction
        await a.breakers.update('other', () => ({ state: 'open' }));
        await hand.query(`UPDATE "${schema}".breakers SET state = '{"state":"half-open"}' WHERE key = 'search'`);
        await hand.query('COMMIT');
        expect((await storeUpdate).previous).toEqual({ state: 'half-open' });
      } finally {
        hand.release();
      }
      await clock.advance(51);
      expect(await a.breakers.get('search')).toEqual({ state: 'open' });
      expect(await a.breakers.get('other')).toEqual({ state: 'open' });
    } finally {
      await close();
    }
  });

  it('takes writes of different keys by several processes and by hand at once without a deadlock, losing none', async () => {
    const { schema, a, b, clock, close } = await twoProcesses();
    try {
      const increment = (current: number | undefined) => (current ?? 0) + 1;
      await Promise.all(
        Array.from({ length: 60 }, (_, index) =>
          index % 10 === 9
            ? admin.query(`DELETE FROM "${schema}".breakers WHERE key = 'scratch'`)
            : (index % 2 === 0 ? a : b).breakers.update<number>(index % 3 === 0 ? 'scratch' : `key${index % 4}`, increment),
        ),
      );
      await clock.advance(51);
      const total = async (key: string) => ((await a.breakers.get(key)) as number | undefined) ?? 0;
      // each keyN: the updates of the indexes ≡ N mod 4 that are neither a delete nor a 'scratch' write
      const expected = (key: number) =>
        Array.from({ length: 60 }, (_, index) => index).filter((index) => index % 10 !== 9 && index % 3 !== 0 && index % 4 === key).length;
      expect(await total('key0')).toBe(expected(0));
      expect(await total('key1')).toBe(expected(1));
      expect(await total('key2')).toBe(expected(2));
      expect(await total('key3')).toBe(expected(3));
    } finally {
      await close();
    }
  });
});
