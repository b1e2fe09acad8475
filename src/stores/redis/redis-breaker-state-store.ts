import type { BreakerStateStore } from '../../ground/ports/stores.ts';
import type { JsonValue } from '../../ground/ports/run-journal.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import { toStoredText } from '../exact-text.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';
import { connectRedis, type RedisConnection, type RedisLike } from './redis-client.ts';

/**
 * Compare-and-set: writes ARGV[3] only if the key still holds what the caller read (ARGV[1] = '1'
 * and the value ARGV[2], or ARGV[1] = '0' and no value). Returns 1 when it wrote.
 */
const COMPARE_AND_SET = `
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '0' then
  if current then return 0 end
elseif current ~= ARGV[2] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[3])
return 1`;

/** Options of {@link createRedisBreakerStateStore}. */
export type RedisBreakerStateStoreOptions = RedisConnection & {
  /** Prepended to every key (`<prefix>breaker:{<key>}`): one per deployment. @defaultValue `'toolrun:'` */
  prefix?: string;
  /** Compare-and-set rounds one `update` may lose to other writers before it gives up. @defaultValue 100 */
  maxConflicts?: number;
};

/** A {@link BreakerStateStore} in Redis; `close()` quits the client when toolrun created it. */
export interface RedisBreakerStateStore extends BreakerStateStore {
  readonly redis: RedisLike;
  close(): Promise<void>;
}

/**
 * Creates a {@link BreakerStateStore} in Redis, shared by every worker process and machine that uses
 * the same Redis and prefix. Each record is one string key holding JSON (the breaker's key in it
 * with `toStoredText`, so keys differing only in a lone surrogate stay apart).
 *
 * `update(key, fn)` is optimistic: it reads the record, computes `fn(current)` and writes it with a
 * Lua compare-and-set that succeeds only if the key still holds what was read; when another
 * process wrote in between, it reads again and calls `fn` again (the port allows this: `fn` is
 * pure). Updates of one key from one store object are also queued in-process, so only other
 * processes can make it retry. The result is linearisable: the shared breaker built on it opens
 * once, alerts once and lets one probe through across every process.
 *
 * @throws ToolrunError `INVALID_OPTIONS` (connection options), `STORE_UNAVAILABLE` (no ioredis, or
 * Redis does not answer a PING). `update` rejects with `STORE_CONFLICT` after `maxConflicts` lost
 * rounds, and with the client's error when Redis cannot be reached.
 */
export async function createRedisBreakerStateStore(options: RedisBreakerStateStoreOptions): Promise<RedisBreakerStateStore> {
  const { redis, close } = await connectRedis(options, 'createRedisBreakerStateStore');
  const prefix = options.prefix ?? 'toolrun:';
  const maxConflicts = options.maxConflicts ?? 100;
  const keyOf = (key: string) => `${prefix}breaker:{${toStoredText(key)}}`;
  const parse = (text: string | null): JsonValue | undefined => (text === null ? undefined : fromJsonText<JsonValue>(text));
  const queues = new Map<string, Promise<unknown>>();

  const updateOnce = async <T extends JsonValue>(key: string, fn: (current: T | undefined) => T) => {
    const redisKey = keyOf(key);
    for (let conflict = 0; conflict <= maxConflicts; conflict++) {
      const previousText = await redis.get(redisKey);
      const nextText = toJsonText(fn(parse(previousText) as T | undefined));
      const written = await redis.eval(COMPARE_AND_SET, 1, redisKey, previousText === null ? '0' : '1', previousText ?? '', nextText);
      if (Number(written) === 1) return { previous: parse(previousText) as T | undefined, next: fromJsonText<T>(nextText) };
      // another process won this round: back off a little, with jitter, so rounds do not collide again
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 ** conflict)));
    }
    throw new ToolrunError('STORE_CONFLICT', `breaker ${key}: lost ${maxConflicts + 1} compare-and-set rounds to other writers`);
  };

  return {
    redis,
    async get(key) {
      return parse(await redis.get(keyOf(key)));
    },
    update<T extends JsonValue>(key: string, fn: (current: T | undefined) => T) {
      const previous = queues.get(key) ?? Promise.resolve();
      const result = previous.then(() => updateOnce(key, fn));
      const settled = result.catch(() => undefined);
      queues.set(key, settled);
      void settled.then(() => {
        if (queues.get(key) === settled) queues.delete(key);
      });
      return result;
    },
    close,
  };
}
