import { describe, expect, it } from 'vitest';
import type { Clock } from '../ground/ports/clock.ts';
import type { BreakerStateStore } from '../ground/ports/stores.ts';
import type { JsonValue } from '../ground/ports/run-journal.ts';
import { createMemoryBreakerStateStore } from '../stores/memory/memory-breaker-state-store.ts';
import { createSharedBreaker, parseSharedBreakerRecord, type SharedBreakerEvent, type SharedBreakerOptions } from './shared-breaker.ts';

const T0 = 1_700_000_000_000;
const AUTH = { message: '401 Unauthorized: API key rejected' };

function createManualClock(startMs = T0): Clock & { advance(ms: number): void } {
  let nowMs = startMs;
  return {
    now: () => nowMs,
    sleep: () => Promise.resolve(),
    advance(ms) {
      nowMs += ms;
    },
  };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** Counts writes, and can hold every call at a gate so that concurrent callers all start before any finishes. */
function instrument(inner: BreakerStateStore) {
  let gate: Promise<void> | undefined;
  const counts = { get: 0, update: 0 };
  const store: BreakerStateStore = {
    async get(key) {
      counts.get += 1;
      if (gate) await gate;
      return inner.get(key);
    },
    async update<T extends JsonValue>(key: string, fn: (current: T | undefined) => T) {
      counts.update += 1;
      if (gate) await gate;
      return inner.update(key, fn);
    },
  };
  return {
    store,
    counts,
    hold() {
      const gated = deferred();
      gate = gated.promise;
      return () => {
        gate = undefined;
        gated.resolve();
      };
    },
  };
}

function setup(options?: Partial<SharedBreakerOptions>, inner: BreakerStateStore = createMemoryBreakerStateStore()) {
  const clock = createManualClock();
  const instrumented = instrument(inner);
  const events: SharedBreakerEvent[] = [];
  let probes = 0;
  const breaker = createSharedBreaker({
    store: instrumented.store,
    clock,
    onEvent: (event) => events.push(event),
    createProbeId: () => `probe-${++probes}`,
    ...(options ? { options } : {}),
  });
  return { clock, breaker, events, ...instrumented };
}

async function openBreaker(breaker: ReturnType<typeof setup>['breaker']) {
  await breaker.recordFailure('crm', AUTH);
  expect(await breaker.recordFailure('crm', AUTH)).toEqual({ opened: true });
}

describe('createSharedBreaker', () => {
  it('allows calls while closed, without writing to the store', async () => {
    const { breaker, counts } = setup();
    expect(await breaker.acquire('crm')).toEqual({ decision: 'allow', state: 'closed' });
    await breaker.recordSuccess('crm');
    expect(counts.update).toBe(0);
    expect(await breaker.state('crm')).toBeUndefined();
  });

  it('reads the store once per call while closed without failures: the success after a clean acquire reads nothing', async () => {
    const { breaker, counts } = setup();
    for (let call = 0; call < 3; call++) {
      expect(await breaker.acquire('crm')).toEqual({ decision: 'allow', state: 'closed' });
      await breaker.recordSuccess('crm');
    }
    expect(counts).toEqual({ get: 3, update: 0 });
  });

  it('a success still resets a failure this breaker recorded after the acquire, and one the acquire saw', async () => {
    const { breaker, counts } = setup();
    await breaker.acquire('crm');
    await breaker.recordFailure('crm', AUTH);
    await breaker.recordSuccess('crm');
    expect((await breaker.state('crm'))?.consecutiveFailures).toBe(0);
    await breaker.recordFailure('crm', AUTH);
    await breaker.acquire('crm'); // sees one failure: the success must read and reset it
    const updates = counts.update;
    await breaker.recordSuccess('crm');
    expect(counts.update).toBe(updates + 1);
    expect((await breaker.state('crm'))?.consecutiveFailures).toBe(0);
    // two failures in a row still open it: nothing was lost by the skipped reads
    await breaker.acquire('crm');
    await breaker.recordFailure('crm', AUTH);
    expect(await breaker.recordFailure('crm', AUTH)).toEqual({ opened: true });
  });

  it('opens after 2 consecutive failures with one breaker-open event', async () => {
    const { breaker, events } = setup();
    expect(await breaker.recordFailure('crm', AUTH)).toEqual({ opened: false });
    expect(await breaker.state('crm')).toEqual({
      state: 'closed',
      consecutiveFailures: 1,
      openedAt: null,
      probeStartedAt: null,
      openings: 0,
      lastError: AUTH.message,
    });
    expect(await breaker.recordFailure('crm', AUTH)).toEqual({ opened: true });
    expect(events).toEqual([{ type: 'breaker-open', key: 'crm', openings: 1, at: T0, lastError: AUTH.message }]);
    expect(await breaker.state('crm')).toEqual({
      state: 'open',
      consecutiveFailures: 2,
      openedAt: T0,
      probeStartedAt: null,
      openings: 1,
      lastError: AUTH.message,
    });
  });

  it('a success between failures resets the count', async () => {
    const { breaker } = setup();
    await breaker.recordFailure('crm', AUTH);
    await breaker.recordSuccess('crm');
    expect(await breaker.recordFailure('crm', AUTH)).toEqual({ opened: false });
    expect((await breaker.state('crm'))?.consecutiveFailures).toBe(1);
  });

  it('keeps keys apart', async () => {
    const { breaker } = setup();
    await openBreaker(breaker);
    expect((await breaker.acquire('billing')).decision).toBe('allow');
  });

  it('rejects while open, with the time left until the probe, without writing', async () => {
    const { breaker, clock, counts, events } = setup();
    await openBreaker(breaker);
    const writes = counts.update;
    expect(await breaker.acquire('crm')).toEqual({ decision: 'reject', state: 'open', retryInMs: 30_000 });
    clock.advance(29_999);
    expect(await breaker.acquire('crm')).toEqual({ decision: 'reject', state: 'open', retryInMs: 1 });
    expect(counts.update).toBe(writes);
    expect(events).toHaveLength(1);
  });

  it('a late failure while open does not extend the cool-down nor raise another alert', async () => {
    const { breaker, clock, events } = setup();
    await openBreaker(breaker);
    clock.advance(10_000);
    expect(await breaker.recordFailure('crm', { message: 'late' })).toEqual({ opened: false });
    expect(await breaker.acquire('crm')).toEqual({ decision: 'reject', state: 'open', retryInMs: 20_000 });
    expect(events.map((event) => event.type)).toEqual(['breaker-open']);
    expect((await breaker.state('crm'))?.lastError).toBe('late');
  });

  it('ticks through every state: open → half-open (one probe) → closed', async () => {
    const { breaker, clock, events } = setup();
    await openBreaker(breaker);
    clock.advance(30_000);
    expect(await breaker.acquire('crm')).toEqual({ decision: 'probe', state: 'half-open', probeId: 'probe-1' });
    expect(await breaker.acquire('crm')).toEqual({ decision: 'reject', state: 'half-open', retryInMs: 60_000 });
    clock.advance(1_000);
    expect(await breaker.acquire('crm')).toEqual({ decision: 'reject', state: 'half-open', retryInMs: 59_000 });
    await breaker.recordSuccess('crm');
    expect(await breaker.acquire('crm')).toEqual({ decision: 'allow', state: 'closed' });
    expect(events).toEqual([
      { type: 'breaker-open', key: 'crm', openings: 1, at: T0, lastError: AUTH.message },
      { type: 'breaker-half-open', key: 'crm', at: T0 + 30_000 },
      { type: 'breaker-close', key: 'crm', at: T0 + 31_000 },
    ]);
    expect(await breaker.state('crm')).toEqual({ state: 'closed', consecutiveFailures: 0, openedAt: null, probeStartedAt: null, openings: 1, lastError: null });
  });

  it('a failed probe re-opens (breaker-reopen, no new alert) and starts a new cool-down', async () => {
    const { breaker, clock, events } = setup();
    await openBreaker(breaker);
    clock.advance(30_000);
    const probe = await breaker.acquire('crm');
    expect(probe.decision).toBe('probe');
    clock.advance(500);
    expect(await breaker.recordFailure('crm', { message: 'still 401' }, probe.probeId)).toEqual({ opened: false });
    expect(await breaker.acquire('crm')).toEqual({ decision: 'reject', state: 'open', retryInMs: 30_000 });
    expect(events.map((event) => event.type)).toEqual(['breaker-open', 'breaker-half-open', 'breaker-reopen']);
    expect(events[2]).toEqual({ type: 'breaker-reopen', key: 'crm', at: T0 + 30_500 });
    expect(await breaker.state('crm')).toEqual({
      state: 'open',
      consecutiveFailures: 3,
      openedAt: T0 + 30_500,
      probeStartedAt: null,
      openings: 1,
      lastError: 'still 401',
    });
    // the next cycle probes again, and a success closes it
    clock.advance(30_000);
    expect((await breaker.acquire('crm')).decision).toBe('probe');
    await breaker.recordSuccess('crm');
    expect((await breaker.acquire('crm')).decision).toBe('allow');
    // opening again later is a new alert
    await openBreaker(breaker);
    expect(events.filter((event) => event.type === 'breaker-open').map((event) => (event as { openings: number }).openings)).toEqual([1, 2]);
  });

  it('is never stuck: a probe not reported within probeTimeoutMs lets another go', async () => {
    const { breaker, clock } = setup({ probeTimeoutMs: 5_000 });
    await openBreaker(breaker);
    clock.advance(30_000);
    expect((await breaker.acquire('crm')).decision).toBe('probe');
    clock.advance(4_999);
    expect(await breaker.acquire('crm')).toEqual({ decision: 'reject', state: 'half-open', retryInMs: 1 });
    clock.advance(1);
    expect(await breaker.acquire('crm')).toEqual({ decision: 'probe', state: 'half-open', probeId: 'probe-2' });
    expect((await breaker.state('crm'))?.probeStartedAt).toBe(T0 + 35_000);
    expect((await breaker.state('crm'))?.probeId).toBe('probe-2');
  });

  it('a late failure of a call let through before the opening leaves the probe in flight alone', async () => {
    const { breaker, clock, events } = setup();
    await openBreaker(breaker);
    clock.advance(30_000);
    const probe = await breaker.acquire('crm');
    expect(probe.decision).toBe('probe');
    // a call that started while the breaker was closed fails now: it reports without a probe id
    expect(await breaker.recordFailure('crm', { message: 'late 401' })).toEqual({ opened: false });
    expect(await breaker.state('crm')).toMatchObject({ state: 'half-open', probeStartedAt: T0 + 30_000, lastError: 'late 401' });
    expect(events.map((event) => event.type)).toEqual(['breaker-open', 'breaker-half-open']);
    // the probe's own failure re-opens it
    expect(await breaker.recordFailure('crm', { message: 'still 401' }, probe.probeId)).toEqual({ opened: false });
    expect(events.map((event) => event.type)).toEqual(['breaker-open', 'breaker-half-open', 'breaker-reopen']);
  });

  it('releaseProbe frees the slot at once; it is a no-op in other states', async () => {
    const { breaker, clock, events } = setup();
    await breaker.releaseProbe('crm');
    expect(await breaker.state('crm')).toBeUndefined();
    await openBreaker(breaker);
    await breaker.releaseProbe('crm');
    expect((await breaker.state('crm'))?.state).toBe('open');
    clock.advance(30_000);
    expect((await breaker.acquire('crm')).decision).toBe('probe');
    await breaker.releaseProbe('crm');
    expect((await breaker.state('crm'))?.probeStartedAt).toBeNull();
    expect(await breaker.acquire('crm')).toEqual({ decision: 'probe', state: 'half-open', probeId: 'probe-2' });
    // only the open → half-open move is an event
    expect(events.map((event) => event.type)).toEqual(['breaker-open', 'breaker-half-open']);
  });

  describe('probe tokens', () => {
    async function halfOpen(options?: Partial<SharedBreakerOptions>) {
      const context = setup(options);
      await openBreaker(context.breaker);
      context.clock.advance(30_000);
      return context;
    }

    it('a released probe is immediately grantable again, to a new token', async () => {
      const { breaker, counts } = await halfOpen();
      const first = await breaker.acquire('crm');
      expect(first).toEqual({ decision: 'probe', state: 'half-open', probeId: 'probe-1' });
      expect((await breaker.acquire('crm')).decision).toBe('reject');
      await breaker.releaseProbe('crm', first.probeId);
      expect(await breaker.state('crm')).toEqual({
        state: 'half-open',
        consecutiveFailures: 2,
        openedAt: T0,
        probeStartedAt: null,
        openings: 1,
        lastError: AUTH.message,
      });
      expect(await breaker.acquire('crm')).toEqual({ decision: 'probe', state: 'half-open', probeId: 'probe-2' });
      // the release was one write; a second release of the same token writes nothing and frees nothing
      const writes = counts.update;
      await breaker.releaseProbe('crm', first.probeId);
      expect(counts.update).toBe(writes);
      expect(await breaker.state('crm')).toMatchObject({ probeId: 'probe-2', probeStartedAt: T0 + 30_000 });
      expect((await breaker.acquire('crm')).decision).toBe('reject');
    });

    it('a stale release (its probe expired after probeTimeoutMs and another was granted) cannot free the new probe', async () => {
      const { breaker, clock } = await halfOpen({ probeTimeoutMs: 5_000 });
      const lost = await breaker.acquire('crm');
      clock.advance(5_000);
      const current = await breaker.acquire('crm');
      expect(current).toEqual({ decision: 'probe', state: 'half-open', probeId: 'probe-2' });
      await breaker.releaseProbe('crm', lost.probeId);
      expect(await breaker.acquire('crm')).toEqual({ decision: 'reject', state: 'half-open', retryInMs: 5_000 });
      // the holder of the current token can still release it
      await breaker.releaseProbe('crm', current.probeId);
      expect((await breaker.acquire('crm')).decision).toBe('probe');
    });

    it('an unreported probe expires after probeTimeoutMs even with tokens', async () => {
      const { breaker, clock } = await halfOpen({ probeTimeoutMs: 5_000 });
      expect((await breaker.acquire('crm')).probeId).toBe('probe-1');
      clock.advance(4_999);
      expect(await breaker.acquire('crm')).toEqual({ decision: 'reject', state: 'half-open', retryInMs: 1 });
      clock.advance(1);
      expect(await breaker.acquire('crm')).toEqual({ decision: 'probe', state: 'half-open', probeId: 'probe-2' });
    });

    it("a stale probe's late failure is counted but does not re-open over the current probe; the current probe's failure re-opens", async () => {
      const { breaker, clock, events } = await halfOpen({ probeTimeoutMs: 5_000 });
      const lost = await breaker.acquire('crm');
      clock.advance(5_000);
      const current = await breaker.acquire('crm');
      expect(await breaker.recordFailure('crm', { message: 'late 401' }, lost.probeId)).toEqual({ opened: false });
      expect(await breaker.state('crm')).toEqual({
        state: 'half-open',
        consecutiveFailures: 3,
        openedAt: T0,
        probeStartedAt: T0 + 35_000,
        probeId: 'probe-2',
        openings: 1,
        lastError: 'late 401',
      });
      expect(events.map((event) => event.type)).toEqual(['breaker-open', 'breaker-half-open']);
      expect(await breaker.recordFailure('crm', { message: 'still 401' }, current.probeId)).toEqual({ opened: false });
      expect(await breaker.state('crm')).toEqual({
        state: 'open',
        consecutiveFailures: 4,
        openedAt: T0 + 35_000,
        probeStartedAt: null,
        openings: 1,
        lastError: 'still 401',
      });
      expect(events.map((event) => event.type)).toEqual(['breaker-open', 'breaker-half-open', 'breaker-reopen']);
    });

    it('a success closes the breaker whoever reports it, with a current, stale or no token', async () => {
      for (const token of ['probe-1', 'stale', undefined]) {
        const { breaker } = await halfOpen();
        await breaker.acquire('crm');
        await breaker.recordSuccess('crm', token);
        expect(await breaker.state('crm')).toEqual({
          state: 'closed',
          consecutiveFailures: 0,
          openedAt: null,
          probeStartedAt: null,
          openings: 1,
          lastError: null,
        });
      }
    });

    it('a record written without a token (an older process) is released by any release', async () => {
      const inner = createMemoryBreakerStateStore();
      await inner.update('crm', () => ({ state: 'half-open', consecutiveFailures: 2, openedAt: T0, probeStartedAt: T0 + 30_000, openings: 1, lastError: 'x' }));
      const { breaker } = setup(undefined, inner);
      await breaker.releaseProbe('crm', 'probe-from-a-new-process');
      expect((await breaker.state('crm'))?.probeStartedAt).toBeNull();
    });

    it('100 concurrent acquires: one probe, and the stored token is the winner’s', async () => {
      const { breaker, hold } = await halfOpen();
      const release = hold();
      const pending = Array.from({ length: 100 }, () => breaker.acquire('crm'));
      release();
      const probes = (await Promise.all(pending)).filter((result) => result.decision === 'probe');
      expect(probes).toHaveLength(1);
      expect((await breaker.state('crm'))?.probeId).toBe(probes[0]!.probeId);
    });

    it('works for any key, e.g. a model breaker keyed model:<name>', async () => {
      const { breaker, clock, events } = setup({ failureThreshold: 1 });
      expect(await breaker.recordFailure('model:gpt-4o', { message: '401 invalid_api_key' })).toEqual({ opened: true });
      expect((await breaker.acquire('model:gpt-4o')).decision).toBe('reject');
      expect((await breaker.acquire('model:gpt-4o-mini')).decision).toBe('allow');
      clock.advance(30_000);
      const probe = await breaker.acquire('model:gpt-4o');
      expect(probe.decision).toBe('probe');
      await breaker.recordSuccess('model:gpt-4o', probe.probeId);
      expect(events.map((event) => [event.type, event.key])).toEqual([
        ['breaker-open', 'model:gpt-4o'],
        ['breaker-half-open', 'model:gpt-4o'],
        ['breaker-close', 'model:gpt-4o'],
      ]);
    });

    it('the default token is unique per probe', async () => {
      const clock = createManualClock();
      const breaker = createSharedBreaker({ store: createMemoryBreakerStateStore(), clock, options: { failureThreshold: 1, halfOpenAfterMs: 0 } });
      const tokens = new Set<string>();
      await breaker.recordFailure('crm', AUTH);
      for (let index = 0; index < 50; index++) {
        const probe = await breaker.acquire('crm');
        expect(probe.decision).toBe('probe');
        tokens.add(probe.probeId!);
        await breaker.releaseProbe('crm', probe.probeId);
      }
      expect(tokens.size).toBe(50);
    });
  });

  it('truncates a long error message in the record to 500 characters', async () => {
    const { breaker } = setup({ failureThreshold: 1 });
    await breaker.recordFailure('crm', { message: 'x'.repeat(10_000) });
    expect((await breaker.state('crm'))?.lastError).toBe(`${'x'.repeat(500)}…`);
  });

  it('treats a corrupt stored record as a closed breaker', async () => {
    const inner = createMemoryBreakerStateStore();
    await inner.update('crm', () => ({ state: 'weird' }));
    const { breaker, events } = setup({ failureThreshold: 1 }, inner);
    expect(await breaker.acquire('crm')).toEqual({ decision: 'allow', state: 'closed' });
    expect(await breaker.state('crm')).toBeUndefined();
    expect(await breaker.recordFailure('crm', AUTH)).toEqual({ opened: true });
    expect(events).toHaveLength(1);
  });

  it('a listener that throws changes nothing', async () => {
    const clock = createManualClock();
    const breaker = createSharedBreaker({
      store: createMemoryBreakerStateStore(),
      clock,
      options: { failureThreshold: 1 },
      onEvent: () => {
        throw new Error('listener bug');
      },
    });
    expect(await breaker.recordFailure('crm', AUTH)).toEqual({ opened: true });
    expect((await breaker.acquire('crm')).decision).toBe('reject');
  });

  it.each([
    { failureThreshold: 0 },
    { failureThreshold: 2.5 },
    { halfOpenAfterMs: -1 },
    { halfOpenAfterMs: Number.POSITIVE_INFINITY },
    { probeTimeoutMs: 0 },
    { probeTimeoutMs: Number.NaN },
  ])('throws INVALID_OPTIONS for %j', (options) => {
    expect(() => createSharedBreaker({ store: createMemoryBreakerStateStore(), clock: createManualClock(), options })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
  });

  describe('concurrency (deferred promises fix the interleaving)', () => {
    it('100 concurrent acquires after the cool-down: exactly one probe, one half-open event', async () => {
      const { breaker, clock, events, hold } = setup();
      await openBreaker(breaker);
      clock.advance(30_000);
      const release = hold();
      const pending = Array.from({ length: 100 }, () => breaker.acquire('crm'));
      // every caller has read the store (all saw `open`, due for a probe) before any update runs
      release();
      const results = await Promise.all(pending);
      expect(results.filter((result) => result.decision === 'probe')).toHaveLength(1);
      expect(results.filter((result) => result.decision === 'reject')).toHaveLength(99);
      expect(results.filter((result) => result.decision === 'reject').every((result) => result.state === 'half-open' && result.retryInMs === 60_000)).toBe(
        true,
      );
      expect(events.filter((event) => event.type === 'breaker-half-open')).toHaveLength(1);
    });

    it('100 concurrent failures from closed: exactly one opened, one alert', async () => {
      const { breaker, events, hold } = setup();
      const release = hold();
      const pending = Array.from({ length: 100 }, () => breaker.recordFailure('crm', AUTH));
      release();
      const results = await Promise.all(pending);
      expect(results.filter((result) => result.opened)).toHaveLength(1);
      expect(events.filter((event) => event.type === 'breaker-open')).toHaveLength(1);
      expect(await breaker.state('crm')).toMatchObject({ state: 'open', consecutiveFailures: 100, openings: 1 });
    });

    it('100 concurrent successes on a half-open breaker: one close event', async () => {
      const { breaker, clock, events, hold } = setup();
      await openBreaker(breaker);
      clock.advance(30_000);
      await breaker.acquire('crm');
      const release = hold();
      const pending = Array.from({ length: 100 }, () => breaker.recordSuccess('crm'));
      release();
      await Promise.all(pending);
      expect(events.filter((event) => event.type === 'breaker-close')).toHaveLength(1);
    });

    it('with an optimistic store that runs fn more than once on stale values, decisions stay exact', async () => {
      const inner = createMemoryBreakerStateStore();
      const optimistic: BreakerStateStore = {
        get: (key) => inner.get(key),
        async update<T extends JsonValue>(key: string, fn: (current: T | undefined) => T) {
          // a first try on a stale read (absent), thrown away, as an optimistic backend would
          fn(undefined);
          return inner.update(key, fn);
        },
      };
      const { breaker, clock, events, hold } = setup(undefined, optimistic);
      await openBreaker(breaker);
      clock.advance(30_000);
      const release = hold();
      const pending = Array.from({ length: 20 }, () => breaker.acquire('crm'));
      release();
      const results = await Promise.all(pending);
      expect(results.filter((result) => result.decision === 'probe')).toHaveLength(1);
      expect(events.map((event) => event.type)).toEqual(['breaker-open', 'breaker-half-open']);
    });

    it('two breakers (two processes) over one store: one alert, one probe', async () => {
      const inner = createMemoryBreakerStateStore();
      const clock = createManualClock();
      const events: SharedBreakerEvent[] = [];
      const first = createSharedBreaker({ store: inner, clock, onEvent: (event) => events.push(event) });
      const second = createSharedBreaker({ store: inner, clock, onEvent: (event) => events.push(event) });
      await Promise.all([first.recordFailure('crm', AUTH), second.recordFailure('crm', AUTH), first.recordFailure('crm', AUTH)]);
      clock.advance(30_000);
      const results = await Promise.all([first.acquire('crm'), second.acquire('crm'), second.acquire('crm'), first.acquire('crm')]);
      expect(results.map((result) => result.decision).sort()).toEqual(['probe', 'reject', 'reject', 'reject']);
      expect(events.map((event) => event.type)).toEqual(['breaker-open', 'breaker-half-open']);
    });
  });
});

describe('parseSharedBreakerRecord', () => {
  it('accepts a valid record and rejects anything else', () => {
    const record = { state: 'half-open', consecutiveFailures: 2, openedAt: 1, probeStartedAt: 2, openings: 1, lastError: null };
    expect(parseSharedBreakerRecord(record)).toEqual(record);
    expect(parseSharedBreakerRecord({ ...record, probeId: 'p1' })).toEqual({ ...record, probeId: 'p1' });
    // a token without a probe in flight, or of the wrong type, is dropped, not fatal
    expect(parseSharedBreakerRecord({ ...record, probeStartedAt: null, probeId: 'p1' })).toEqual({ ...record, probeStartedAt: null });
    expect(parseSharedBreakerRecord({ ...record, probeId: 7 })).toEqual(record);
    for (const value of [
      undefined,
      null,
      1,
      'open',
      [],
      { ...record, state: 'ajar' },
      { ...record, openedAt: '1' },
      { ...record, lastError: 5 },
      { ...record, openings: undefined as unknown as number },
    ]) {
      expect(parseSharedBreakerRecord(value as JsonValue | undefined)).toBeUndefined();
    }
  });
});
