/**
 * `toolrun/redis`: the shared circuit breakers' state, the two dead-letter queues and the claims on
 * runs in Redis (`ioredis`, an optional peer dependency).
 *
 * @packageDocumentation
 */
export { createRedisBreakerStateStore, type RedisBreakerStateStore, type RedisBreakerStateStoreOptions } from './redis-breaker-state-store.ts';
export { createRedisDeadLetterQueues, type RedisDeadLetterQueues, type RedisDeadLetterQueuesOptions } from './redis-dead-letter-queues.ts';
export { createRedisClaimStore, type RedisClaimStore, type RedisClaimStoreOptions } from './redis-claim-store.ts';
export type { RedisConnection, RedisLike } from './redis-client.ts';
