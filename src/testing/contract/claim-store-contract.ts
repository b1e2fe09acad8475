import { describe, expect, it } from 'vitest';
import type { ClaimStore } from '../../ground/ports/stores.ts';
import { useStoresHarness, type MakeStores } from './stores-contract-harness.ts';

/** Options of {@link describeClaimStoreContract}. */
export interface ClaimStoreContractOptions {
  /**
   * Whose clock the claims' leases run on. `'injected'`: the harness's fake clock (the suite moves
   * it to end leases exactly). `'server'`: the store's own clock (Redis): the suite waits out short
   * leases in real time (a few hundred ms per test) and checks `leaseUntil` within a second.
   * @defaultValue `'injected'`
   */
  clock?: 'injected' | 'server';
}

const LEASE_MS = 30_000;
/** The lease the real-time tests wait out, in ms. */
const SHORT_LEASE_MS = 500;

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Contract of `ClaimStore` on `stores.claims`: exclusive claims that end at their lease, renewal
 * only by a live holder, release only by the holder, exactly one winner among concurrent
 * acquirers, exact keys and holders, and `INVALID_OPTIONS` for a bad lease.
 */
export function describeClaimStoreContract(makeStores: MakeStores, options: ClaimStoreContractOptions = {}): void {
  const serverClock = options.clock === 'server';
  describe('ClaimStore', () => {
    const harness = useStoresHarness(makeStores);
    const claims = (): ClaimStore => harness().stores.claims;
    /** The store's idea of now, in epoch ms. */
    const now = () => (serverClock ? Date.now() : harness().clock.now());
    /** Lets `ms` pass on the claims' clock. */
    const pass = async (ms: number) => (serverClock ? realSleep(ms) : harness().clock.advance(ms));
    /** The lease the expiry tests use, and how long before its end "just before" is. */
    const expiringLeaseMs = serverClock ? SHORT_LEASE_MS : LEASE_MS;
    const expectLeaseUntil = (leaseUntil: string | undefined, expectedMs: number) => {
      expect(leaseUntil).toBeTypeOf('string');
      const actualMs = Date.parse(leaseUntil!);
      if (serverClock) expect(Math.abs(actualMs - expectedMs)).toBeLessThan(1_000);
      else expect(leaseUntil).toBe(new Date(expectedMs).toISOString());
    };
    const expectInvalidOptions = async (promise: Promise<unknown>) => {
      const error = await promise.then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error, 'rejects').toBeInstanceOf(Error);
      expect((error as { code?: string }).code).toBe('INVALID_OPTIONS');
    };

    it('reports nobody on a key never claimed', async () => {
      expect(await claims().get('run:never')).toBeUndefined();
    });

    it('grants a free key, then refuses it to another holder and reports who holds it until when', async () => {
      const takenAtMs = now();
      expect(await claims().acquire('run:r1', 'drain-a', LEASE_MS)).toBe(true);
      expect(await claims().acquire('run:r1', 'drain-b', LEASE_MS)).toBe(false);
      const held = await claims().get('run:r1');
      expect(held?.holder).toBe('drain-a');
      expectLeaseUntil(held?.leaseUntil, takenAtMs + LEASE_MS);
      // claims on other keys are independent
      expect(await claims().acquire('run:r2', 'drain-b', LEASE_MS)).toBe(true);
      expect((await claims().get('run:r2'))?.holder).toBe('drain-b');
      expect((await claims().get('run:r1'))?.holder).toBe('drain-a');
    });

    it("renews one's own claim on acquire, from now", async () => {
      expect(await claims().acquire('run:r1', 'worker-1', LEASE_MS)).toBe(true);
      await pass(serverClock ? 50 : 10_000);
      const againAtMs = now();
      expect(await claims().acquire('run:r1', 'worker-1', LEASE_MS)).toBe(true);
      expectLeaseUntil((await claims().get('run:r1'))?.leaseUntil, againAtMs + LEASE_MS);
      expect(await claims().acquire('run:r1', 'worker-2', LEASE_MS)).toBe(false);
    });

    it('keeps a claim exclusive until its lease ends, then hands it to the next acquirer', async () => {
      expect(await claims().acquire('run:r1', 'crashed-drain', expiringLeaseMs)).toBe(true);
      if (!serverClock) {
        await pass(expiringLeaseMs - 1);
        expect(await claims().acquire('run:r1', 'drain-b', LEASE_MS)).toBe(false);
        expect((await claims().get('run:r1'))?.holder).toBe('crashed-drain');
        await pass(1);
      } else {
        expect(await claims().acquire('run:r1', 'drain-b', LEASE_MS)).toBe(false);
        await pass(expiringLeaseMs + 200);
      }
      expect(await claims().get('run:r1')).toBeUndefined();
      expect(await claims().acquire('run:r1', 'drain-b', LEASE_MS)).toBe(true);
      expect((await claims().get('run:r1'))?.holder).toBe('drain-b');
      expect(await claims().acquire('run:r1', 'crashed-drain', LEASE_MS)).toBe(false);
    });

    it('renews a live claim from now, so it outlasts its first lease', async () => {
      // in real time, renew for long so that a slow machine cannot end the renewed claim early
      const renewMs = serverClock ? LEASE_MS : expiringLeaseMs;
      expect(await claims().acquire('run:r1', 'worker-1', expiringLeaseMs)).toBe(true);
      await pass(serverClock ? 100 : expiringLeaseMs - 1_000);
      const renewedAtMs = now();
      expect(await claims().renew('run:r1', 'worker-1', renewMs)).toBe(true);
      expectLeaseUntil((await claims().get('run:r1'))?.leaseUntil, renewedAtMs + renewMs);
      // past the first lease's end, still held
      await pass(serverClock ? expiringLeaseMs + 200 : 1_000);
      expect(await claims().acquire('run:r1', 'worker-2', LEASE_MS)).toBe(false);
      expect((await claims().get('run:r1'))?.holder).toBe('worker-1');
    });

    it('refuses to renew a claim that ended and was taken, and leaves the new holder alone', async () => {
      expect(await claims().acquire('run:r1', 'worker-1', expiringLeaseMs)).toBe(true);
      await pass(serverClock ? expiringLeaseMs + 200 : expiringLeaseMs);
      expect(await claims().acquire('run:r1', 'worker-2', LEASE_MS)).toBe(true);
      const before = await claims().get('run:r1');
      expect(await claims().renew('run:r1', 'worker-1', LEASE_MS * 10)).toBe(false);
      expect(await claims().get('run:r1')).toEqual(before);
      expect(await claims().release('run:r1', 'worker-1')).toBe(false);
      expect((await claims().get('run:r1'))?.holder).toBe('worker-2');
    });

    it('refuses to renew a claim that ended even when nobody took it, and an unknown or foreign one', async () => {
      expect(await claims().acquire('run:r1', 'worker-1', expiringLeaseMs)).toBe(true);
      await pass(serverClock ? expiringLeaseMs + 200 : expiringLeaseMs);
      expect(await claims().renew('run:r1', 'worker-1', LEASE_MS)).toBe(false);
      expect(await claims().get('run:r1')).toBeUndefined();
      expect(await claims().renew('run:never', 'worker-1', LEASE_MS)).toBe(false);
      expect(await claims().get('run:never')).toBeUndefined();
      expect(await claims().acquire('run:r2', 'worker-2', LEASE_MS)).toBe(true);
      const before = await claims().get('run:r2');
      expect(await claims().renew('run:r2', 'worker-1', LEASE_MS * 10)).toBe(false);
      expect(await claims().get('run:r2')).toEqual(before);
    });

    it('releases only for the holder: a non-holder changes nothing, the holder frees the key once', async () => {
      expect(await claims().acquire('run:r1', 'drain-a', LEASE_MS)).toBe(true);
      const before = await claims().get('run:r1');
      expect(await claims().release('run:r1', 'drain-b')).toBe(false);
      expect(await claims().get('run:r1')).toEqual(before);
      expect(await claims().release('run:r1', 'drain-a')).toBe(true);
      expect(await claims().get('run:r1')).toBeUndefined();
      expect(await claims().release('run:r1', 'drain-a')).toBe(false);
      expect(await claims().release('run:never', 'drain-a')).toBe(false);
      expect(await claims().acquire('run:r1', 'drain-b', LEASE_MS)).toBe(true);
      // a released claim cannot be renewed by its old holder
      expect(await claims().renew('run:r1', 'drain-a', LEASE_MS)).toBe(false);
      expect((await claims().get('run:r1'))?.holder).toBe('drain-b');
    });

    it('reports a release after the claim ended as not held, and frees the key', async () => {
      expect(await claims().acquire('run:r1', 'worker-1', expiringLeaseMs)).toBe(true);
      await pass(serverClock ? expiringLeaseMs + 200 : expiringLeaseMs);
      expect(await claims().release('run:r1', 'worker-1')).toBe(false);
      expect(await claims().get('run:r1')).toBeUndefined();
      expect(await claims().acquire('run:r1', 'worker-2', LEASE_MS)).toBe(true);
    });

    it('grants a free key to exactly one of 20 concurrent acquirers', async () => {
      const holders = Array.from({ length: 20 }, (_, index) => `drain-${index}`);
      const results = await Promise.all(holders.map((holder) => claims().acquire('run:race', holder, LEASE_MS)));
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = holders[results.indexOf(true)];
      expect((await claims().get('run:race'))?.holder).toBe(winner);
    });

    it('grants an ended claim to exactly one of 20 concurrent acquirers', async () => {
      expect(await claims().acquire('run:race', 'crashed', expiringLeaseMs)).toBe(true);
      await pass(serverClock ? expiringLeaseMs + 200 : expiringLeaseMs);
      const holders = Array.from({ length: 20 }, (_, index) => `drain-${index}`);
      const results = await Promise.all(holders.map((holder) => claims().acquire('run:race', holder, LEASE_MS)));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect((await claims().get('run:race'))?.holder).toBe(holders[results.indexOf(true)]);
    });

    it('compares keys and holders exactly (\\u0000, lone surrogates, U+0001)', async () => {
      const nulKey = 'run:a\u0000b';
      const loneKey = 'run:\ud800';
      const holder = 'drain\u0000\udc00\u0001';
      expect(await claims().acquire(nulKey, holder, LEASE_MS)).toBe(true);
      expect(await claims().acquire(loneKey, 'other', LEASE_MS)).toBe(true);
      // a key that a lossy store would confuse with the lone-surrogate one is another key
      expect(await claims().acquire('run:\ufffd', 'third', LEASE_MS)).toBe(true);
      expect(await claims().acquire('run:a', 'fourth', LEASE_MS)).toBe(true);
      expect((await claims().get(nulKey))?.holder).toBe(holder);
      expect((await claims().get(loneKey))?.holder).toBe('other');
      expect(await claims().renew(nulKey, 'drain\u0000\ufffd\u0001', LEASE_MS)).toBe(false);
      expect(await claims().renew(nulKey, holder, LEASE_MS)).toBe(true);
      expect(await claims().release(nulKey, holder)).toBe(true);
      expect(await claims().get(nulKey)).toBeUndefined();
      expect((await claims().get('run:a'))?.holder).toBe('fourth');
    });

    it('rejects a lease that is not a positive, finite number of milliseconds up to 2^31 − 1 with INVALID_OPTIONS', async () => {
      for (const leaseMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31]) {
        await expectInvalidOptions(claims().acquire('run:r1', 'worker-1', leaseMs));
      }
      expect(await claims().get('run:r1')).toBeUndefined();
      expect(await claims().acquire('run:r1', 'worker-1', LEASE_MS)).toBe(true);
      for (const leaseMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31]) {
        await expectInvalidOptions(claims().renew('run:r1', 'worker-1', leaseMs));
      }
      expect((await claims().get('run:r1'))?.holder).toBe('worker-1');
    });
  });
}
