/**
 * toolrun — make the tool calls of LLM agents fail well.
 *
 * The root entry: the tool runtime, the agent loop, the worker and its dead-letter queues, and
 * the in-memory stores. Backends and integrations are subpaths (`toolrun/sqlite`, `toolrun/openai`,
 * `toolrun/testing`).
 */
export * from './core/index.ts';
export * from './agent/index.ts';
export * from './worker/index.ts';
export { createMemoryStores } from './stores/memory/index.ts';
export { parseArguments } from './schema/parse-arguments.ts';
export { createAjvSchemaValidator } from './schema/ajv-schema-validator.ts';
export { parseRetryAfter } from './policies/retry-after.ts';
export { computeBackoffMs, DEFAULT_BACKOFF, type BackoffOptions } from './policies/backoff.ts';
export { decideRetry, DEFAULT_RETRY_POLICY, resolveRetryPolicy, type RetryPolicy, type RetryDecision } from './policies/retry-policy.ts';
export { createSessionBreakers, type SessionBreakers, type SessionBreakerOptions } from './policies/session-breaker.ts';
export { createSharedBreaker, type SharedBreaker, type SharedBreakerOptions, type SharedBreakerRecord, type BreakerState } from './policies/shared-breaker.ts';
