/**
 * `toolrun/redis`: the shared circuit breakers' state and the two dead-letter queues in Redis
 * (`ioredis`, an optional peer dependency). Guarantees: see each factory; deployment:
 * docs/distributed-notes.md.
 */
export { createRedisBreakerStateStore, type RedisBreakerStateStore, type RedisBreakerStateStoreOptions } from './redis-breaker-state-store.ts';
export { createRedisDeadLetterQueue } from './redis-dead-letter-queue.ts';
export { createRedisDeadLetterQueues, type RedisDeadLetterQueues, type RedisDeadLetterQueuesOptions } from './redis-dead-letter-queues.ts';
export type { RedisConnection, RedisLike } from './redis-client.ts';
