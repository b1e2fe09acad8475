import { describe, expect, it } from 'vitest';
import { createSessionBreakers, DEFAULT_SESSION_BREAKER_OPTIONS, MAX_SESSION_BREAKER_KEY_LENGTH } from './session-breaker.ts';

const counted = { kind: 'counted' } as const;
const invalid = (fingerprint: string) => ({ kind: 'invalid-arguments', fingerprint }) as const;

describe('createSessionBreakers', () => {
  it('opens after 3 consecutive counted failures (SPEC §1.6), and reports the opening once', () => {
    const breakers = createSessionBreakers();
    expect(breakers.check('s1', 'search')).toEqual({ state: 'closed', consecutiveFailures: 0 });
    expect(breakers.recordFailure('s1', 'search', counted)).toEqual({ state: 'closed', consecutiveFailures: 1, opened: false });
    expect(breakers.recordFailure('s1', 'search', counted)).toEqual({ state: 'closed', consecutiveFailures: 2, opened: false });
    expect(breakers.recordFailure('s1', 'search', counted)).toEqual({ state: 'open', consecutiveFailures: 3, opened: true });
    expect(breakers.check('s1', 'search')).toEqual({ state: 'open', consecutiveFailures: 3 });
    expect(breakers.recordFailure('s1', 'search', counted)).toEqual({ state: 'open', consecutiveFailures: 4, opened: false });
  });

  it('a success resets the count', () => {
    const breakers = createSessionBreakers();
    breakers.recordFailure('s1', 'search', counted);
    breakers.recordFailure('s1', 'search', counted);
    breakers.recordSuccess('s1', 'search');
    expect(breakers.check('s1', 'search')).toEqual({ state: 'closed', consecutiveFailures: 0 });
    expect(breakers.recordFailure('s1', 'search', counted).consecutiveFailures).toBe(1);
  });

  it('a success closes an open breaker', () => {
    const breakers = createSessionBreakers({ failureThreshold: 1 });
    expect(breakers.recordFailure('s1', 'search', counted).opened).toBe(true);
    breakers.recordSuccess('s1', 'search');
    expect(breakers.check('s1', 'search').state).toBe('closed');
  });

  it('keeps sessions and tools apart', () => {
    const breakers = createSessionBreakers({ failureThreshold: 2 });
    breakers.recordFailure('s1', 'search', counted);
    breakers.recordFailure('s1', 'search', counted);
    breakers.recordFailure('s1', 'weather', counted);
    breakers.recordFailure('s2', 'search', counted);
    expect(breakers.check('s1', 'search').state).toBe('open');
    expect(breakers.check('s1', 'weather')).toEqual({ state: 'closed', consecutiveFailures: 1 });
    expect(breakers.check('s2', 'search')).toEqual({ state: 'closed', consecutiveFailures: 1 });
    expect(breakers.check('s3', 'search')).toEqual({ state: 'closed', consecutiveFailures: 0 });
  });

  describe('invalid arguments', () => {
    it('a first failure with given arguments does not count; the same arguments again do', () => {
      const breakers = createSessionBreakers();
      expect(breakers.recordFailure('s', 't', invalid('a'))).toEqual({ state: 'closed', consecutiveFailures: 0, opened: false });
      expect(breakers.recordFailure('s', 't', invalid('a'))).toEqual({ state: 'closed', consecutiveFailures: 1, opened: false });
      expect(breakers.recordFailure('s', 't', invalid('a'))).toEqual({ state: 'closed', consecutiveFailures: 2, opened: false });
      expect(breakers.recordFailure('s', 't', invalid('a'))).toEqual({ state: 'open', consecutiveFailures: 3, opened: true });
    });

    it('a model correcting its arguments each time is never cut off', () => {
      const breakers = createSessionBreakers();
      for (let index = 0; index < 20; index += 1) {
        expect(breakers.recordFailure('s', 't', invalid(`attempt-${index}`))).toEqual({ state: 'closed', consecutiveFailures: 0, opened: false });
      }
    });

    it('a loop over two bad calls counts too', () => {
      const breakers = createSessionBreakers();
      const states = ['a', 'b', 'a', 'b', 'a'].map((fingerprint) => breakers.recordFailure('s', 't', invalid(fingerprint)).consecutiveFailures);
      expect(states).toEqual([0, 0, 1, 2, 3]);
      expect(breakers.check('s', 't').state).toBe('open');
    });

    it('a new argument set neither counts nor resets counted failures', () => {
      const breakers = createSessionBreakers();
      breakers.recordFailure('s', 't', counted);
      breakers.recordFailure('s', 't', counted);
      expect(breakers.recordFailure('s', 't', invalid('new')).consecutiveFailures).toBe(2);
      expect(breakers.recordFailure('s', 't', counted)).toEqual({ state: 'open', consecutiveFailures: 3, opened: true });
    });

    it('a success forgets the failing arguments', () => {
      const breakers = createSessionBreakers();
      breakers.recordFailure('s', 't', invalid('a'));
      breakers.recordSuccess('s', 't');
      expect(breakers.recordFailure('s', 't', invalid('a')).consecutiveFailures).toBe(0);
    });

    it('remembers the last 32 distinct failing argument sets', () => {
      const breakers = createSessionBreakers();
      for (let index = 0; index <= 32; index += 1) breakers.recordFailure('s', 't', invalid(`f${index}`));
      // f0 was forgotten when f32 arrived; f1 is still remembered
      expect(breakers.recordFailure('s', 't', invalid('f1')).consecutiveFailures).toBe(1);
      expect(breakers.recordFailure('s', 't', invalid('f0')).consecutiveFailures).toBe(1);
    });
  });

  it('reset forgets one session, or all', () => {
    const breakers = createSessionBreakers({ failureThreshold: 1 });
    breakers.recordFailure('s1', 't', counted);
    breakers.recordFailure('s2', 't', counted);
    breakers.reset('s1');
    expect(breakers.check('s1', 't').state).toBe('closed');
    expect(breakers.check('s2', 't').state).toBe('open');
    breakers.reset();
    expect(breakers.check('s2', 't').state).toBe('closed');
  });

  it('forgets the least recently used session beyond maxSessions', () => {
    const breakers = createSessionBreakers({ failureThreshold: 1, maxSessions: 2 });
    breakers.recordFailure('s1', 't', counted);
    breakers.recordFailure('s2', 't', counted);
    // touching s1 makes s2 the least recently used
    expect(breakers.check('s1', 't').state).toBe('open');
    breakers.recordFailure('s3', 't', counted);
    expect(breakers.check('s1', 't').state).toBe('open');
    expect(breakers.check('s2', 't').state).toBe('closed');
    expect(breakers.check('s3', 't').state).toBe('open');
  });

  it('the recency order stays right when the most recent session is touched again, forgotten and recreated', () => {
    const breakers = createSessionBreakers({ failureThreshold: 1, maxSessions: 2 });
    breakers.recordFailure('s1', 't', counted);
    breakers.recordFailure('s2', 't', counted);
    // s2 is the most recent: checking it again moves nothing
    expect(breakers.check('s2', 't').state).toBe('open');
    expect(breakers.check('s2', 't').state).toBe('open');
    // s1 becomes the most recent, then s2 again
    expect(breakers.check('s1', 't').state).toBe('open');
    expect(breakers.check('s2', 't').state).toBe('open');
    breakers.recordFailure('s3', 't', counted); // forgets s1, the least recently used
    expect(breakers.check('s1', 't').state).toBe('closed');
    expect(breakers.check('s2', 't').state).toBe('open');
    // the most recent session (s2) is forgotten by a success, then failing again makes it the newest
    breakers.recordSuccess('s2', 't');
    breakers.recordFailure('s2', 't', counted);
    breakers.check('s3', 't');
    breakers.check('s2', 't');
    breakers.recordFailure('s4', 't', counted); // forgets s3
    expect(breakers.check('s3', 't').state).toBe('closed');
    expect(breakers.check('s2', 't').state).toBe('open');
    expect(breakers.check('s4', 't').state).toBe('open');
    breakers.reset('s4');
    breakers.recordFailure('s5', 't', counted);
    breakers.check('s2', 't');
    breakers.recordFailure('s6', 't', counted); // forgets s5, touched before s2
    expect(breakers.check('s5', 't').state).toBe('closed');
    expect(breakers.check('s2', 't').state).toBe('open');
  });

  it('checking or succeeding in an unknown session creates no state', () => {
    const breakers = createSessionBreakers({ failureThreshold: 1, maxSessions: 1 });
    breakers.recordFailure('s1', 't', counted);
    for (let index = 0; index < 5; index += 1) {
      breakers.check(`other-${index}`, 't');
      breakers.recordSuccess(`other-${index}`, 't');
    }
    expect(breakers.check('s1', 't').state).toBe('open');
  });

  it('a hallucinated tool name the model keeps calling trips its own breaker after 3 failures', () => {
    const breakers = createSessionBreakers();
    for (let index = 0; index < 2; index += 1) expect(breakers.recordFailure('s1', 'search_web_v2', counted)).toMatchObject({ state: 'closed', opened: false });
    expect(breakers.recordFailure('s1', 'search_web_v2', counted)).toEqual({ state: 'open', consecutiveFailures: 3, opened: true });
    expect(breakers.check('s1', 'search_web_v2').state).toBe('open');
    expect(breakers.check('s1', 'search_web').state).toBe('closed');
  });

  it('a 1 MB name is kept as its first 256 characters: the same name trips, memory stays bounded', () => {
    const breakers = createSessionBreakers();
    const huge = `${'x'.repeat(1_000_000)}`;
    for (let index = 0; index < 3; index += 1) breakers.recordFailure('s1', huge, counted);
    expect(breakers.check('s1', huge).state).toBe('open');
    expect(breakers.check('s1', 'x'.repeat(MAX_SESSION_BREAKER_KEY_LENGTH)).state).toBe('open');
    expect(breakers.check('s1', 'x'.repeat(MAX_SESSION_BREAKER_KEY_LENGTH - 1)).state).toBe('closed');
    // a huge session id too
    for (let index = 0; index < 3; index += 1) breakers.recordFailure(huge, 't', counted);
    expect(breakers.check(`${huge}-other-suffix`, 't').state).toBe('open');
    breakers.reset(huge);
    expect(breakers.check(huge, 't').state).toBe('closed');
  });

  it('forgets the least recently failed name beyond maxToolsPerSession (default 256)', () => {
    expect(DEFAULT_SESSION_BREAKER_OPTIONS.maxToolsPerSession).toBe(256);
    const breakers = createSessionBreakers({ failureThreshold: 1, maxToolsPerSession: 3 });
    for (const name of ['a', 'b', 'c']) breakers.recordFailure('s1', name, counted);
    // a failing again makes b the least recently failed
    breakers.recordFailure('s1', 'a', counted);
    breakers.recordFailure('s1', 'd', counted);
    expect(['a', 'b', 'c', 'd'].map((name) => breakers.check('s1', name).state)).toEqual(['open', 'closed', 'open', 'open']);
    const many = createSessionBreakers({ failureThreshold: 1 });
    for (let index = 0; index < 10_000; index += 1) many.recordFailure('s1', `hallucinated_${index}`, counted);
    expect(many.check('s1', 'hallucinated_0').state).toBe('closed');
    expect(many.check('s1', 'hallucinated_9999').state).toBe('open');
    expect(many.check('s1', `hallucinated_${10_000 - 256}`).state).toBe('open');
    expect(many.check('s1', `hallucinated_${10_000 - 257}`).state).toBe('closed');
  });

  it.each([
    { failureThreshold: 0 },
    { failureThreshold: 1.5 },
    { maxSessions: 0 },
    { maxSessions: Number.NaN },
    { maxToolsPerSession: 0 },
    { maxToolsPerSession: 2.5 },
  ])('throws INVALID_OPTIONS for %j', (options) => {
    expect(() => createSessionBreakers(options)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
  });
});
