import { createHash } from 'node:crypto';
import { ToolrunError } from '../../ground/toolrun-error.ts';

/** What a query returns, as far as toolrun reads it. */
export interface PostgresQueryResult<Row> {
  rows: Row[];
  /** Rows inserted, updated or deleted (`null` for other statements). */
  rowCount: number | null;
}

/** A query as `pg` takes it: with a `name`, the statement is prepared once per connection and reused. */
export interface PostgresQueryConfig {
  name?: string;
  text: string;
  values?: readonly unknown[];
}

/** Anything that runs a parameterised query: a `pg.Pool` or a checked-out `pg.PoolClient`. */
export interface PostgresQueryable {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rows are typed by each caller
  query<Row = any>(text: string, values?: readonly unknown[]): Promise<PostgresQueryResult<Row>>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rows are typed by each caller
  query<Row = any>(config: PostgresQueryConfig): Promise<PostgresQueryResult<Row>>;
}

/** A statement toolrun runs often: its text and a name derived from it, so the server parses and plans it once per connection. */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

/**
 * Names `text` as a prepared statement (`toolrun_` + 16 hex characters of its SHA-1, well under
 * PostgreSQL's 63-byte limit; the text includes the schema, so stores on different schemas never
 * share a name). Run it with `pool.query({ ...statement, values })`.
 */
export function prepareStatement(text: string): PreparedStatement {
  return { name: `toolrun_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`, text };
}

/** A connection checked out of a pool, for a transaction. */
export interface PostgresPoolClientLike extends PostgresQueryable {
  /** Gives the connection back; `true` (or an error) destroys it instead. */
  release(destroy?: boolean | Error): void;
}

/**
 * The few methods of a `pg.Pool` toolrun calls, typed structurally so that `pg` stays an optional
 * peer dependency (BullMQ types its Redis client the same way). A `pg.Pool` fits as is.
 */
export interface PostgresPoolLike extends PostgresQueryable {
  connect(): Promise<PostgresPoolClientLike>;
  end(): Promise<void>;
}

/** A pool toolrun created from a connection string (it also listens for idle-client errors). */
interface OwnedPool extends PostgresPoolLike {
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * Creates a `pg.Pool` for `connectionString`, importing `pg` only now (an optional peer).
 * Errors of idle connections (a server restart) are passed to `onIdleError` instead of crashing
 * the process: the pool replaces those connections on the next query.
 *
 * @throws ToolrunError `STORE_UNAVAILABLE` when `pg` is not installed.
 */
export async function createPostgresPool(
  connectionString: string,
  options: { maxConnections?: number; onIdleError?: (error: Error) => void } = {},
): Promise<PostgresPoolLike> {
  let driver: { default?: { Pool: new (config: object) => OwnedPool }; Pool?: new (config: object) => OwnedPool };
  try {
    driver = (await import('pg')) as unknown as typeof driver;
  } catch (error) {
    throw new ToolrunError('STORE_UNAVAILABLE', 'the PostgreSQL backend needs the `pg` package: npm install pg', { cause: error });
  }
  const Pool = driver.default?.Pool ?? driver.Pool;
  if (Pool === undefined) throw new ToolrunError('STORE_UNAVAILABLE', 'the installed `pg` package has no Pool');
  const pool = new Pool({ connectionString, ...(options.maxConnections !== undefined ? { max: options.maxConnections } : {}) });
  pool.on('error', (error) => options.onIdleError?.(error));
  return pool;
}

/**
 * Runs `work` inside `BEGIN … COMMIT` on one pooled connection. On any error the transaction is
 * rolled back and the error rethrown; a connection whose rollback failed (the server went away)
 * is destroyed rather than returned to the pool.
 */
export async function inTransaction<T>(pool: PostgresPoolLike, work: (client: PostgresQueryable) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    client.release();
    return result;
  } catch (error) {
    let rolledBack = false;
    try {
      await client.query('ROLLBACK');
      rolledBack = true;
    } catch {
      rolledBack = false;
    }
    client.release(!rolledBack);
    throw error;
  }
}

/** A schema name toolrun accepts: a plain lower-case SQL identifier. */
const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The schema name, double-quoted for SQL text.
 *
 * @throws ToolrunError `INVALID_OPTIONS` unless `schema` is a lower-case identifier
 * (`^[a-z_][a-z0-9_]{0,62}$`): it is interpolated into SQL, so nothing else is let through.
 */
export function quoteSchema(schema: string): string {
  if (!SCHEMA_PATTERN.test(schema)) {
    throw new ToolrunError('INVALID_OPTIONS', `schema must match ${SCHEMA_PATTERN.source}, received ${JSON.stringify(schema)}`);
  }
  return `"${schema}"`;
}
