/**
 * The policies of toolrun: backoff, Retry-After, retry decisions, and the per-session and shared
 * circuit breakers. Pure code; time and randomness are injected.
 */
export * from './backoff.ts';
export * from './retry-after.ts';
export * from './header-source.ts';
export * from './rate-limit-headers.ts';
export * from './retry-policy.ts';
export * from './fingerprint-arguments.ts';
export * from './session-breaker.ts';
export * from './shared-breaker.ts';
export * from './memory-breaker-state-store.ts';
