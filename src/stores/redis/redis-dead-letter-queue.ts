import type { Clock } from '../../ground/ports/clock.ts';
import type { DeadLetterQueue, DeadLetterRecord } from '../../ground/ports/stores.ts';
import { toStoredText } from '../exact-text.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';
import { pageOfRecords } from '../memory/memory-dead-letter-queue.ts';
import type { RedisLike } from './redis-client.ts';

/**
 * The running byte total (`…:bytes`) is only kept once it exists: `bytes()` creates it from a scan
 * of the entries the first time (a queue written before the total existed is counted right), and
 * every write after that moves it. Lua strings are bytes, so `#json` is the UTF-8 length.
 */

/** KEYS: seq, entries, order, bytes. ARGV: added-at ms, entry JSON. Returns the new id. */
const PUSH = `
local id = redis.call('INCR', KEYS[1])
redis.call('HSET', KEYS[2], id, ARGV[1] .. '|' .. ARGV[2])
redis.call('ZADD', KEYS[3], id, id)
if redis.call('EXISTS', KEYS[4]) == 1 then redis.call('INCRBY', KEYS[4], #ARGV[2]) end
return id`;

/** KEYS: seq, entries, order, keys, bytes. ARGV: key, added-at ms, entry JSON. Returns { id, added 0|1 }. */
const PUSH_ONCE = `
local existing = redis.call('HGET', KEYS[4], ARGV[1])
if existing then return { existing, 0 } end
local id = redis.call('INCR', KEYS[1])
redis.call('HSET', KEYS[2], id, ARGV[2] .. '|' .. ARGV[3])
redis.call('ZADD', KEYS[3], id, id)
redis.call('HSET', KEYS[4], ARGV[1], id)
if redis.call('EXISTS', KEYS[5]) == 1 then redis.call('INCRBY', KEYS[5], #ARGV[3]) end
return { tostring(id), 1 }`;

/** KEYS: entries, bytes. Returns the byte total, creating it from the entries when missing. */
const BYTES = `
local total = redis.call('GET', KEYS[2])
if total then return tonumber(total) end
local sum = 0
for _, payload in ipairs(redis.call('HVALS', KEYS[1])) do
  sum = sum + #payload - string.find(payload, '|', 1, true)
end
redis.call('SET', KEYS[2], sum)
return sum`;

/** KEYS: entries, order. ARGV: start, stop (ZRANGE ranks). Returns id, payload, id, payload… */
const LIST = `
local ids = redis.call('ZRANGE', KEYS[2], ARGV[1], ARGV[2])
local out = {}
for _, id in ipairs(ids) do
  local payload = redis.call('HGET', KEYS[1], id)
  if payload then
    out[#out + 1] = id
    out[#out + 1] = payload
  end
end
return out`;

/** KEYS: entries, order, bytes. ARGV: id. Returns 1 when it removed the entry. */
const REMOVE = `
if redis.call('ZREM', KEYS[2], ARGV[1]) == 1 then
  local payload = redis.call('HGET', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[1], ARGV[1])
  if payload and redis.call('EXISTS', KEYS[3]) == 1 then
    redis.call('DECRBY', KEYS[3], #payload - string.find(payload, '|', 1, true))
  end
  return 1
end
return 0`;

/** KEYS: entries, order, bytes. Returns how many entries it removed. */
const PURGE = `
local count = redis.call('ZCARD', KEYS[2])
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('SET', KEYS[3], 0)
return count`;

/** KEYS: order. */
const SIZE = `return redis.call('ZCARD', KEYS[1])`;

/** KEYS: entries. ARGV: id. */
const GET = `return redis.call('HGET', KEYS[1], ARGV[1])`;

/** Entries read per range while a filtered or `after` page is looked for. */
const SCAN_PAGE_SIZE = 1_000;

/** Ids are the decimal text of a positive integer; anything else names no entry. */
const ID_PATTERN = /^[1-9][0-9]{0,15}$/;

/**
 * Creates a durable, inspectable {@link DeadLetterQueue} named `name` under `prefix`. Layout
 * (all keys share the hash tag `{<prefix>dlq:<name>}`, so they live in one Cluster slot):
 * - `…:seq` — the last id handed out (`INCR`): ids increase and are never reused;
 * - `…:entries` — hash id → `<addedAtMs>|<entry JSON>`;
 * - `…:order` — sorted set of ids (score = id): insertion order, for `list` and `oldest`;
 * - `…:keys` — hash pushOnce key → id, kept when entries are removed or purged (keys are stored
 *   with `toStoredText`, so two keys differing only in a lone surrogate stay apart);
 * - `…:bytes` — the running total of the entries' JSON bytes, for `bytes()` (created from a scan
 *   of the entries by the first `bytes()` call, then kept by every write).
 * Every method is one Lua script or one command, atomic against every other client, except a
 * `list` with `after` or `filter`: it reads the queue oldest first, a range at a time, until the
 * page is full (O(entries before the page's end): Redis keeps no index on the cause fields).
 *
 * Durability is Redis's: with `appendonly yes` (and `appendfsync everysec` or `always`) entries
 * survive a restart; without persistence a Redis restart loses every entry and resets the ids.
 * Keep DLQs in PostgreSQL (`toolrun/postgres`) when Redis runs without persistence.
 */
export function createRedisDeadLetterQueue<T>(redis: RedisLike, options: { name: string; prefix?: string; clock: Clock }): DeadLetterQueue<T> {
  const { clock } = options;
  const base = `${options.prefix ?? 'toolrun:'}{dlq:${options.name}}`;
  const seq = `${base}:seq`;
  const entries = `${base}:entries`;
  const order = `${base}:order`;
  const keys = `${base}:keys`;
  const bytes = `${base}:bytes`;

  const toRecord = (id: string, payload: string): DeadLetterRecord<T> => {
    const separator = payload.indexOf('|');
    return { id, addedAt: new Date(Number(payload.slice(0, separator))).toISOString(), entry: fromJsonText<T>(payload.slice(separator + 1)) };
  };
  const range = async (start: number, stop: number): Promise<DeadLetterRecord<T>[]> => {
    const flat = (await redis.eval(LIST, 2, entries, order, start, stop)) as string[];
    const records: DeadLetterRecord<T>[] = [];
    for (let index = 0; index < flat.length; index += 2) records.push(toRecord(flat[index]!, flat[index + 1]!));
    return records;
  };

  return {
    async push(entry) {
      return String(await redis.eval(PUSH, 4, seq, entries, order, bytes, clock.now(), toJsonText(entry)));
    },
    async pushOnce(key, entry) {
      const [id, added] = (await redis.eval(PUSH_ONCE, 5, seq, entries, order, keys, bytes, toStoredText(key), clock.now(), toJsonText(entry))) as [
        string,
        number,
      ];
      return { id: String(id), added: Number(added) === 1 };
    },
    async get(id) {
      if (!ID_PATTERN.test(id)) return undefined;
      const payload = (await redis.eval(GET, 1, entries, id)) as string | null;
      return payload === null ? undefined : toRecord(id, payload);
    },
    async list(listOptions) {
      const offset = Math.max(0, Math.floor(listOptions?.offset ?? 0));
      const limit = listOptions?.limit === undefined || listOptions.limit < 0 ? Number.POSITIVE_INFINITY : Math.floor(listOptions.limit);
      if (limit === 0) return [];
      const stop = limit === Number.POSITIVE_INFINITY ? -1 : offset + limit - 1;
      if (listOptions?.after === undefined && listOptions?.filter === undefined) return range(offset, stop);
      const wanted = { ...listOptions, offset: 0, limit: -1 };
      let toSkip = offset;
      const page: DeadLetterRecord<T>[] = [];
      for (let start = 0; page.length < limit; start += SCAN_PAGE_SIZE) {
        const read = await range(start, start + SCAN_PAGE_SIZE - 1);
        for (const record of pageOfRecords(read, wanted)) {
          if (toSkip > 0) toSkip -= 1;
          else if (page.length < limit) page.push(record);
        }
        if (read.length < SCAN_PAGE_SIZE) break;
      }
      return page;
    },
    async remove(id) {
      if (!ID_PATTERN.test(id)) return false;
      return Number(await redis.eval(REMOVE, 3, entries, order, bytes, id)) === 1;
    },
    async size() {
      return Number(await redis.eval(SIZE, 1, order));
    },
    async bytes() {
      return Number(await redis.eval(BYTES, 2, entries, bytes));
    },
    async oldest() {
      return (await range(0, 0))[0];
    },
    async purge() {
      return Number(await redis.eval(PURGE, 3, entries, order, bytes));
    },
  };
}
