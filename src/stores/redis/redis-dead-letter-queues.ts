import type { MessageFailureEntry, ResumableEntry } from '../../ground/dead-letter-entries.ts';
import { systemClock, type Clock } from '../../ground/ports/clock.ts';
import type { DeadLetterListOptions, DeadLetterQueue, DeadLetterRecord } from '../../ground/ports/stores.ts';
import { pageOfRecords } from '../memory/memory-dead-letter-queue.ts';
import { connectRedis, type RedisConnection, type RedisLike } from './redis-client.ts';
import { createRedisDeadLetterQueue } from './redis-dead-letter-queue.ts';

/** Options of {@link createRedisDeadLetterQueues}. */
export type RedisDeadLetterQueuesOptions = RedisConnection & {
  /** Prepended to every key: one per deployment. @defaultValue `'toolrun:'` */
  prefix?: string;
  /** Source of the `addedAt` times. @defaultValue `systemClock` */
  clock?: Clock;
};

/** The message and tool DLQs in Redis, entry formats unchanged (`MessageFailureEntry`, `ToolFailureEntry`). */
export interface RedisDeadLetterQueues {
  messageDlq: DeadLetterQueue<MessageFailureEntry>;
  toolDlq: DeadLetterQueue<ResumableEntry>;
  readonly redis: RedisLike;
  /** Quits the client when toolrun created it. */
  close(): Promise<void>;
}

/** Entries read per `list` call while a filtered or `after` page is looked for. */
const SCAN_PAGE_SIZE = 1_000;

/**
 * The queue with `list` taking `after` and `filter` (see `DeadLetterListOptions`): a call with
 * either reads the queue oldest first in pages of its own `list({ limit, offset })` until the page
 * is full (O(entries before the page's end): Redis keeps no index on the cause fields); a call with
 * neither goes straight to the queue.
 */
function withListOptions<T>(queue: DeadLetterQueue<T>): DeadLetterQueue<T> {
  const list = async (options?: DeadLetterListOptions): Promise<DeadLetterRecord<T>[]> => {
    if (options?.after === undefined && options?.filter === undefined) return queue.list(options);
    const limit = options.limit === undefined || options.limit < 0 ? Number.POSITIVE_INFINITY : Math.floor(options.limit);
    const wanted = { ...options, offset: 0, limit: -1 };
    let toSkip = Math.max(0, Math.floor(options.offset ?? 0));
    const page: DeadLetterRecord<T>[] = [];
    for (let storeOffset = 0; page.length < limit; storeOffset += SCAN_PAGE_SIZE) {
      const read = await queue.list({ limit: SCAN_PAGE_SIZE, offset: storeOffset });
      for (const record of pageOfRecords(read, wanted)) {
        if (toSkip > 0) toSkip -= 1;
        else if (page.length < limit) page.push(record);
      }
      if (read.length < SCAN_PAGE_SIZE) break;
    }
    return page;
  };
  return {
    push: (entry) => queue.push(entry),
    pushOnce: (key, entry) => queue.pushOnce(key, entry),
    get: (id) => queue.get(id),
    list,
    remove: (id) => queue.remove(id),
    size: () => queue.size(),
    bytes: () => queue.bytes(),
    oldest: () => queue.oldest(),
    purge: () => queue.purge(),
  };
}

/**
 * Creates the two dead-letter queues of a worker in Redis (named `message` and `tool`, see
 * `createRedisDeadLetterQueue` for the layout and the durability they need). Their `list` takes
 * `after` and `filter` by reading the queue in pages (correct, not indexed).
 *
 * @throws ToolrunError `INVALID_OPTIONS` or `STORE_UNAVAILABLE` (see `connectRedis`).
 */
export async function createRedisDeadLetterQueues(options: RedisDeadLetterQueuesOptions): Promise<RedisDeadLetterQueues> {
  const { redis, owned } = await connectRedis(options, 'createRedisDeadLetterQueues');
  const clock = options.clock ?? systemClock;
  const prefix = options.prefix ?? 'toolrun:';
  return {
    redis,
    messageDlq: withListOptions(createRedisDeadLetterQueue<MessageFailureEntry>(redis, { name: 'message', prefix, clock })),
    toolDlq: withListOptions(createRedisDeadLetterQueue<ResumableEntry>(redis, { name: 'tool', prefix, clock })),
    async close() {
      if (owned) await redis.quit().catch(() => undefined);
    },
  };
}
