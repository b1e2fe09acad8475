import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF } from './backoff.ts';
import { decideRetry, DEFAULT_RETRY_POLICY, resolveRetryPolicy, type DecideRetryInput, type RetryPolicy } from './retry-policy.ts';

const zero = () => 0;

function decide(overrides: Partial<Omit<DecideRetryInput, 'failure'>> & { failure?: Partial<DecideRetryInput['failure']> }) {
  return decideRetry({
    attempt: 1,
    policy: DEFAULT_RETRY_POLICY,
    idempotent: true,
    remainingBudgetMs: undefined,
    random: zero,
    ...overrides,
    failure: { transient: true, ambiguous: false, ...overrides.failure },
  });
}

describe('resolveRetryPolicy', () => {
  it('defaults to 3 attempts, the default backoff, 100 ms minimum', () => {
    expect(resolveRetryPolicy()).toEqual({ maxAttempts: 3, backoff: { baseDelayMs: 500, factor: 2, maxDelayMs: 30_000, jitterMs: 100 }, minDelayMs: 100 });
    expect(resolveRetryPolicy()).toEqual(DEFAULT_RETRY_POLICY);
    expect(DEFAULT_RETRY_POLICY.backoff).toBe(DEFAULT_BACKOFF);
  });

  it('merges overrides left to right, field by field, inside backoff too', () => {
    const policy = resolveRetryPolicy(
      { maxAttempts: 5, backoff: { baseDelayMs: 200 } },
      undefined,
      { backoff: { jitterMs: 0 }, minDelayMs: 50 },
      { maxAttempts: 2 },
    );
    expect(policy).toEqual({ maxAttempts: 2, backoff: { baseDelayMs: 200, factor: 2, maxDelayMs: 30_000, jitterMs: 0 }, minDelayMs: 50 });
  });

  it('skips undefined fields (from JavaScript callers) and does not mutate the defaults', () => {
    const policy = resolveRetryPolicy({ maxAttempts: undefined, backoff: { factor: undefined, maxDelayMs: 1000 } } as never);
    expect(policy.maxAttempts).toBe(3);
    expect(policy.backoff).toEqual({ ...DEFAULT_BACKOFF, maxDelayMs: 1000 });
    expect(DEFAULT_BACKOFF.maxDelayMs).toBe(30_000);
  });

  it('accepts one attempt (no retry) and zero delays', () => {
    expect(resolveRetryPolicy({ maxAttempts: 1, minDelayMs: 0, backoff: { baseDelayMs: 0, jitterMs: 0, maxDelayMs: 0, factor: 1 } }).maxAttempts).toBe(1);
  });

  it.each([
    [{ maxAttempts: 0 }, 'maxAttempts'],
    [{ maxAttempts: -1 }, 'maxAttempts'],
    [{ maxAttempts: 1.5 }, 'maxAttempts'],
    [{ maxAttempts: Number.POSITIVE_INFINITY }, 'maxAttempts'],
    [{ maxAttempts: Number.NaN }, 'maxAttempts'],
    [{ minDelayMs: -1 }, 'minDelayMs'],
    [{ minDelayMs: Number.NaN }, 'minDelayMs'],
    [{ backoff: { baseDelayMs: -1 } }, 'baseDelayMs'],
    [{ backoff: { maxDelayMs: Number.POSITIVE_INFINITY } }, 'maxDelayMs'],
    [{ backoff: { jitterMs: -0.5 } }, 'jitterMs'],
    [{ backoff: { factor: 0.5 } }, 'factor'],
    [{ backoff: { factor: Number.NaN } }, 'factor'],
    [{ maxAttempts: '3' as unknown as number }, 'maxAttempts'],
  ])('throws INVALID_OPTIONS for %j', (override, field) => {
    expect(() => resolveRetryPolicy(override)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining(field) }));
  });
});

describe('decideRetry', () => {
  it('retries a transient failure with the backoff: 500 then 1000 ms (+ jitter)', () => {
    expect(decide({ attempt: 1 })).toEqual({ retry: true, delayMs: 500, reason: 'backoff' });
    expect(decide({ attempt: 2 })).toEqual({ retry: true, delayMs: 1000, reason: 'backoff' });
    expect(decide({ attempt: 2, random: () => 0.5 })).toEqual({ retry: true, delayMs: 1050, reason: 'backoff' });
  });

  it('does not retry a failure that is not transient', () => {
    expect(decide({ failure: { transient: false } })).toEqual({ retry: false, reason: 'not-transient' });
    expect(decide({ failure: { transient: false, retryAfterMs: 10 } })).toEqual({ retry: false, reason: 'not-transient' });
  });

  it('stops at maxAttempts', () => {
    expect(decide({ attempt: 3 })).toEqual({ retry: false, reason: 'attempts-exhausted' });
    expect(decide({ attempt: 4 })).toEqual({ retry: false, reason: 'attempts-exhausted' });
    const once: RetryPolicy = resolveRetryPolicy({ maxAttempts: 1 });
    expect(decide({ attempt: 1, policy: once })).toEqual({ retry: false, reason: 'attempts-exhausted' });
  });

  it('does not retry an ambiguous failure of a tool that is not idempotent', () => {
    expect(decide({ idempotent: false, failure: { ambiguous: true } })).toEqual({ retry: false, reason: 'ambiguous-not-idempotent' });
    expect(decide({ idempotent: true, failure: { ambiguous: true } })).toEqual({ retry: true, delayMs: 500, reason: 'backoff' });
    expect(decide({ idempotent: false, failure: { ambiguous: false } })).toEqual({ retry: true, delayMs: 500, reason: 'backoff' });
  });

  it('checks attempts before ambiguity', () => {
    expect(decide({ attempt: 3, idempotent: false, failure: { ambiguous: true } })).toEqual({ retry: false, reason: 'attempts-exhausted' });
  });

  it('uses the server Retry-After instead of the backoff', () => {
    expect(decide({ failure: { retryAfterMs: 2500 } })).toEqual({ retry: true, delayMs: 2500, reason: 'retry-after' });
    expect(decide({ attempt: 2, failure: { retryAfterMs: 300 } })).toEqual({ retry: true, delayMs: 300, reason: 'retry-after' });
  });

  it('never waits less than minDelayMs: Retry-After 0 is not a hot loop', () => {
    expect(decide({ failure: { retryAfterMs: 0 } })).toEqual({ retry: true, delayMs: 100, reason: 'retry-after' });
    expect(decide({ failure: { retryAfterMs: 42 } })).toEqual({ retry: true, delayMs: 100, reason: 'retry-after' });
  });

  it('treats a negative, NaN or infinite Retry-After as absent: the backoff applies', () => {
    for (const retryAfterMs of [-1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(decide({ failure: { retryAfterMs } })).toEqual({ retry: true, delayMs: 500, reason: 'backoff' });
    }
  });

  it('applies minDelayMs to a backoff that is shorter', () => {
    const policy = resolveRetryPolicy({ minDelayMs: 100, backoff: { baseDelayMs: 0, jitterMs: 0 } });
    expect(decide({ policy })).toEqual({ retry: true, delayMs: 100, reason: 'backoff' });
  });

  it('gives up when the Retry-After wait does not fit the remaining budget, with the wait', () => {
    expect(decide({ remainingBudgetMs: 1000, failure: { retryAfterMs: 5000 } })).toEqual({
      retry: false,
      reason: 'retry-after-exceeds-budget',
      retryAfterMs: 5000,
    });
    expect(decide({ remainingBudgetMs: 1000, failure: { retryAfterMs: 1000 } })).toEqual({
      retry: false,
      reason: 'retry-after-exceeds-budget',
      retryAfterMs: 1000,
    });
    expect(decide({ remainingBudgetMs: 1001, failure: { retryAfterMs: 1000 } })).toEqual({ retry: true, delayMs: 1000, reason: 'retry-after' });
    // the minimum wait counts too
    expect(decide({ remainingBudgetMs: 50, failure: { retryAfterMs: 0 } })).toEqual({ retry: false, reason: 'retry-after-exceeds-budget', retryAfterMs: 100 });
  });

  it('gives up when the backoff wait does not fit the remaining budget', () => {
    expect(decide({ remainingBudgetMs: 500 })).toEqual({ retry: false, reason: 'budget-exhausted' });
    expect(decide({ remainingBudgetMs: 501 })).toEqual({ retry: true, delayMs: 500, reason: 'backoff' });
    expect(decide({ remainingBudgetMs: 550, random: () => 0.5 })).toEqual({ retry: false, reason: 'budget-exhausted' });
    expect(decide({ remainingBudgetMs: 0 })).toEqual({ retry: false, reason: 'budget-exhausted' });
    expect(decide({ remainingBudgetMs: -20 })).toEqual({ retry: false, reason: 'budget-exhausted' });
  });

  it('waits the default 500, 1000 ms then stops after the 3rd attempt (SPEC §1.4)', () => {
    const waits: number[] = [];
    let attempt = 1;
    for (;;) {
      const decision = decide({ attempt });
      if (!decision.retry) {
        expect(decision.reason).toBe('attempts-exhausted');
        break;
      }
      waits.push(decision.delayMs);
      attempt += 1;
    }
    expect(waits).toEqual([500, 1000]);
    expect(attempt).toBe(3);
  });
});
