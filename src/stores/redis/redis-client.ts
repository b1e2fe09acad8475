import { ToolrunError } from '../../ground/toolrun-error.ts';

/**
 * The few methods of an ioredis client toolrun calls, typed structurally so that `ioredis` stays
 * an optional peer dependency. An `ioredis` `Redis` (or `Cluster`, when every key of one store
 * hashes to one slot, which toolrun's `{…}` key tags ensure) fits as is.
 */
export interface RedisLike {
  get(key: string): Promise<string | null>;
  /** `EVAL script numberOfKeys key… arg…`. */
  eval(script: string, numberOfKeys: number, ...keysAndArguments: (string | number)[]): Promise<unknown>;
  ping(): Promise<unknown>;
  quit(): Promise<unknown>;
}

/** Where a Redis-backed store connects: your client, or a URL toolrun connects to (and owns). */
export type RedisConnection =
  | {
      /** An ioredis client; toolrun never closes it. */
      redis: RedisLike;
      url?: never;
    }
  | {
      /** `redis://[:password@]host:6379[/db]`; `ioredis` is imported and a client created. */
      url: string;
      redis?: never;
      /** Connection errors of the client toolrun creates (they are otherwise ignored: it reconnects). */
      onConnectionError?: (error: Error) => void;
    };

interface OwnedRedis extends RedisLike {
  on(event: 'error', listener: (error: Error) => void): unknown;
  disconnect(): void;
}

/**
 * The client for `connection`: the given one, or a new ioredis client on the URL (`ioredis` is
 * imported only now). Either way it answered a PING. `close` quits the client when it is the new
 * one, and does nothing to a given one.
 *
 * @throws ToolrunError `STORE_UNAVAILABLE` (cause attached) when `ioredis` is missing or Redis does
 * not answer; `INVALID_OPTIONS` when neither or both of `redis` and `url` are given.
 */
export async function connectRedis(connection: RedisConnection, what: string): Promise<{ redis: RedisLike; close: () => Promise<void> }> {
  if ((connection.redis === undefined) === (connection.url === undefined)) {
    throw new ToolrunError('INVALID_OPTIONS', `${what} needs exactly one of \`redis\` and \`url\``);
  }
  let owned: OwnedRedis | undefined;
  if (connection.url !== undefined) {
    let driver: { Redis?: new (url: string, options: object) => OwnedRedis; default?: new (url: string, options: object) => OwnedRedis };
    try {
      driver = (await import('ioredis')) as unknown as typeof driver;
    } catch (error) {
      throw new ToolrunError('STORE_UNAVAILABLE', `${what} needs the \`ioredis\` package: npm install ioredis`, { cause: error });
    }
    const Redis = driver.Redis ?? driver.default;
    if (Redis === undefined) throw new ToolrunError('STORE_UNAVAILABLE', 'the installed `ioredis` package has no Redis class');
    owned = new Redis(connection.url, { maxRetriesPerRequest: 3 });
    const onError = connection.onConnectionError;
    owned.on('error', (error) => onError?.(error));
  }
  const redis = owned ?? connection.redis!;
  try {
    await redis.ping();
  } catch (error) {
    owned?.disconnect();
    const reason = error instanceof Error ? error.message : String(error);
    throw new ToolrunError('STORE_UNAVAILABLE', `${what}: Redis does not answer: ${reason}`, { cause: error });
  }
  const close = async () => {
    if (owned !== undefined) await owned.quit().catch(() => undefined);
  };
  return { redis, close };
}
