import type { Clock } from '../ground/ports/clock.ts';
import type { ClaimStore, RunCheckpoint, RunStore } from '../ground/ports/stores.ts';
import { repeatEvery } from './repeat-every.ts';

/** The claim key of a run: `run:<runId>`. Whoever works on a run (a worker, a replay, a drain) holds it. */
export function runClaimKey(runId: string): string {
  return `run:${runId}`;
}

/** A new claim holder id: unique per handling, so a stale holder can never release a newer claim. */
export function newClaimHolder(label: string): string {
  return `${label}:${globalThis.crypto.randomUUID()}`;
}

/** A held claim, renewed in the background until {@link HeldClaim.release}. */
export interface HeldClaim {
  readonly holder: string;
  /** `true` once a renewal found the claim taken by another holder (it had expired). */
  readonly lost: boolean;
  /** Stops renewing and ends the claim; never rejects. */
  release(): Promise<void>;
  /** Stops renewing, leaving the store alone: the claim was ended elsewhere (a run's last commit released it). Never rejects. */
  forget(): Promise<void>;
}

/**
 * The outcome of {@link claimRun}: the claim, or who holds it. With `readCheckpoint`, `checkpoint`
 * is the run's checkpoint read with the claim in one round trip (`null`: the run has none), or
 * `undefined` when the stores could not combine the two (the caller reads it).
 */
export type ClaimResult = { ok: true; claim: HeldClaim; checkpoint?: RunCheckpoint | null } | { ok: false; holder: string | undefined };

/**
 * Claims `run:<runId>` for `leaseMs`, renewing it every `leaseMs / 3` on `clock` while the work runs
 * (and while `holdWhile`, when given, returns true).
 * Without a claim store (a custom `Stores` bundle that has none) the claim is granted at once and
 * holds nothing: runs are then only protected by the queue's lease and the idempotency ledger.
 */
export async function claimRun(
  claims: ClaimStore | undefined,
  runId: string,
  options: {
    holder: string;
    leaseMs: number;
    clock: Clock;
    onLost?: () => void;
    holdWhile?: (() => boolean) | undefined;
    /** The run store whose checkpoint of the run to read with the claim, in one round trip where the stores can. */
    readCheckpoint?: RunStore;
  },
): Promise<ClaimResult> {
  const { holder, leaseMs, clock } = options;
  if (!claims) return { ok: true, claim: { holder, lost: false, release: async () => undefined, forget: async () => undefined } };
  const key = runClaimKey(runId);
  const combined =
    options.readCheckpoint !== undefined && claims.acquireWithCheckpoint !== undefined
      ? await claims.acquireWithCheckpoint(key, holder, leaseMs, options.readCheckpoint, runId)
      : undefined;
  const acquired = combined !== undefined ? combined.acquired : await claims.acquire(key, holder, leaseMs);
  if (!acquired) {
    const current = await claims.get(key).catch(() => undefined);
    return { ok: false, holder: current?.holder };
  }
  const checkpoint = combined?.acquired === true ? (combined.checkpoint ?? null) : undefined;
  let lost = false;
  const renewing = repeatEvery(clock, leaseMs / 3, async () => {
    // the consumer is going away (its queue lease is given up): let the claim lapse with it
    if (options.holdWhile && !options.holdWhile()) return false;
    try {
      if (await claims.renew(key, holder, leaseMs)) return true;
    } catch {
      return true; // tried again at the next interval: two more tries fit in the lease
    }
    lost = true;
    options.onLost?.();
    return false;
  });
  return {
    ok: true,
    ...(checkpoint !== undefined ? { checkpoint } : {}),
    claim: {
      holder,
      get lost() {
        return lost;
      },
      release: async () => {
        await renewing.stop();
        if (!lost) await claims.release(key, holder).catch(() => undefined);
      },
      forget: async () => {
        await renewing.stop();
      },
    },
  };
}
