import type { ClaimStore } from '../../ground/ports/stores.ts';
import { claimLeaseMs } from '../assert-lease-ms.ts';
import { fromStoredText, toStoredText } from '../exact-text.ts';
import { connectRedis, type RedisConnection, type RedisLike } from './redis-client.ts';

/** KEYS: claim. ARGV: holder, lease ms. Takes a free claim or renews one's own. */
const ACQUIRE = `
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

/** KEYS: claim. ARGV: holder, lease ms. Moves the end of the holder's live claim. */
const RENEW = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/** KEYS: claim. ARGV: holder. Ends the holder's claim. */
const RELEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`;

/** KEYS: claim. Returns { holder, end as epoch ms of the server's clock } or nil. */
const GET = `
local holder = redis.call('GET', KEYS[1])
if not holder then return false end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then return false end
local now = redis.call('TIME')
return { holder, tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) + ttl }`;

/** Options of {@link createRedisClaimStore}. */
export type RedisClaimStoreOptions = RedisConnection & {
  /** Prepended to every key (`<prefix>claim:{<key>}`): one per deployment. @defaultValue `'toolrun:'` */
  prefix?: string;
};

/** A {@link ClaimStore} in Redis; `close()` quits the client when toolrun created it. */
export interface RedisClaimStore extends ClaimStore {
  readonly redis: RedisLike;
  close(): Promise<void>;
}

/**
 * Creates a {@link ClaimStore} in Redis, shared by every process and machine on the same Redis and
 * prefix. Each claim is one string key holding the holder, with the lease as its expiry
 * (`SET … PX leaseMs`): Redis deletes ended claims itself, and every lease is measured on the Redis
 * server's clock (no clock sync between the machines needed; the injected clocks of the other
 * stores play no part, so a fake clock does not move these claims). `acquire`, `renew` and
 * `release` are Lua scripts that compare the holder before they write, atomic against every other
 * client; `get` reports the end as the server's time plus the key's remaining `PTTL`.
 *
 * Durability is Redis's: without persistence a restart frees every claim (a second consumer may
 * then start on a run whose first consumer is still working; the idempotency ledger still keeps
 * each side effect once). Keys and holders are stored with `toStoredText` (exact for any string).
 *
 * @throws ToolrunError `INVALID_OPTIONS` (connection options), `STORE_UNAVAILABLE` (no ioredis, or
 * Redis does not answer a PING). `acquire` and `renew` reject with `INVALID_OPTIONS` for a
 * `leaseMs` that is not a positive, finite number up to 2^31 − 1 (fractions are rounded up); every
 * method rejects with the client's error when Redis cannot be reached.
 */
export async function createRedisClaimStore(options: RedisClaimStoreOptions): Promise<RedisClaimStore> {
  const { redis, close } = await connectRedis(options, 'createRedisClaimStore');
  const prefix = options.prefix ?? 'toolrun:';
  const keyOf = (key: string) => `${prefix}claim:{${toStoredText(key)}}`;
  return {
    redis,
    async acquire(key, holder, leaseMs) {
      const lease = claimLeaseMs(leaseMs, 'acquire');
      return Number(await redis.eval(ACQUIRE, 1, keyOf(key), toStoredText(holder), lease)) === 1;
    },
    async renew(key, holder, leaseMs) {
      const lease = claimLeaseMs(leaseMs, 'renew');
      return Number(await redis.eval(RENEW, 1, keyOf(key), toStoredText(holder), lease)) === 1;
    },
    async release(key, holder) {
      return Number(await redis.eval(RELEASE, 1, keyOf(key), toStoredText(holder))) === 1;
    },
    async get(key) {
      const reply = (await redis.eval(GET, 1, keyOf(key))) as [string, number] | null;
      if (reply === null) return undefined;
      return { holder: fromStoredText(String(reply[0])), leaseUntil: new Date(Number(reply[1])).toISOString() };
    },
    close,
  };
}
