import type { MessageFailureEntry, ResumableEntry } from '../../ground/dead-letter-entries.ts';
import { systemClock, type Clock } from '../../ground/ports/clock.ts';
import type { Stores } from '../../ground/ports/stores.ts';
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
export interface RedisDeadLetterQueues extends Pick<Stores, 'messageDlq' | 'toolDlq'> {
  readonly redis: RedisLike;
  /** Quits the client when toolrun created it. */
  close(): Promise<void>;
}

/**
 * Creates the two dead-letter queues of a worker in Redis (named `message` and `tool`, see
 * `createRedisDeadLetterQueue` for the layout and the durability they need). Their `list` takes
 * `after` and `filter` by reading the queue in pages (correct, not indexed).
 *
 * @throws ToolrunError `INVALID_OPTIONS` or `STORE_UNAVAILABLE` (see `connectRedis`).
 */
export async function createRedisDeadLetterQueues(options: RedisDeadLetterQueuesOptions): Promise<RedisDeadLetterQueues> {
  const { redis, close } = await connectRedis(options, 'createRedisDeadLetterQueues');
  const clock = options.clock ?? systemClock;
  const prefix = options.prefix ?? 'toolrun:';
  return {
    redis,
    messageDlq: createRedisDeadLetterQueue<MessageFailureEntry>(redis, { name: 'message', prefix, clock }),
    toolDlq: createRedisDeadLetterQueue<ResumableEntry>(redis, { name: 'tool', prefix, clock }),
    close,
  };
}
