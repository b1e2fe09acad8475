import type { Clock } from '../../ground/ports/clock.ts';
import type { ClaimStore } from '../../ground/ports/stores.ts';
import { claimLeaseMs } from '../assert-lease-ms.ts';

interface Claim {
  holder: string;
  leaseUntilMs: number;
}

/** Ended claims are swept when the map has grown past this many entries since the last sweep (and at least this many). */
const MIN_SWEEP_SIZE = 64;

/**
 * An in-memory {@link ClaimStore} on the injected clock. Every method runs without an `await`
 * between its read and its write, so of concurrent `acquire` calls for one free key exactly one
 * wins. Ended claims are deleted by `release`, by an `acquire` of their key, and by a sweep that
 * runs when the map has doubled since the last one (amortised O(1) per `acquire`).
 *
 * @throws ToolrunError `INVALID_OPTIONS` from `acquire` and `renew` for a `leaseMs` that is not a
 * positive, finite number up to 2^31 − 1.
 */
export function createMemoryClaimStore(options: { clock: Clock }): ClaimStore {
  const { clock } = options;
  const claims = new Map<string, Claim>();
  let sweepAtSize = MIN_SWEEP_SIZE;
  const sweep = (nowMs: number) => {
    for (const [key, claim] of claims) if (claim.leaseUntilMs <= nowMs) claims.delete(key);
    sweepAtSize = Math.max(MIN_SWEEP_SIZE, claims.size * 2);
  };
  return {
    async acquire(key, holder, leaseMs) {
      const lease = claimLeaseMs(leaseMs, 'acquire');
      const nowMs = clock.now();
      const current = claims.get(key);
      if (current !== undefined && current.holder !== holder && current.leaseUntilMs > nowMs) return false;
      claims.set(key, { holder, leaseUntilMs: nowMs + lease });
      if (claims.size >= sweepAtSize) sweep(nowMs);
      return true;
    },
    async renew(key, holder, leaseMs) {
      const lease = claimLeaseMs(leaseMs, 'renew');
      const nowMs = clock.now();
      const current = claims.get(key);
      if (current === undefined || current.holder !== holder || current.leaseUntilMs <= nowMs) return false;
      current.leaseUntilMs = nowMs + lease;
      return true;
    },
    async release(key, holder) {
      const current = claims.get(key);
      if (current === undefined || current.holder !== holder) return false;
      claims.delete(key);
      return current.leaseUntilMs > clock.now();
    },
    async get(key) {
      const current = claims.get(key);
      if (current === undefined || current.leaseUntilMs <= clock.now()) return undefined;
      return { holder: current.holder, leaseUntil: new Date(current.leaseUntilMs).toISOString() };
    },
  };
}
