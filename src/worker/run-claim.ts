import type { Clock } from '../ground/ports/clock.ts';
import type { CommittedRun, RunJournal, RunStep } from '../ground/ports/run-journal.ts';
import { repeatEvery } from './repeat-every.ts';

/** A new claim holder id: unique per handling, so a stale holder can never release a newer claim. */
export function newClaimHolder(label: string): string {
  return `${label}:${globalThis.crypto.randomUUID()}`;
}

/** A held claim, renewed in the background until {@link HeldClaim.release}. */
export interface HeldClaim {
  /** Stops renewing and ends the claim; never rejects. */
  release(): Promise<void>;
  /** Stops renewing, leaving the store alone: the claim was ended elsewhere (the run's last commit ended it). Never rejects. */
  forget(): Promise<void>;
}

/** The outcome of {@link claimRun}: the claim with what was committed of the run, or who holds it. */
export type ClaimResult = ({ ok: true; claim: HeldClaim; started: boolean } & CommittedRun) | { ok: false; holder: string | undefined };

/**
 * Opens `runId` in `journal` under a claim of `holder` for `leaseMs`, renewing it every `leaseMs / 3`
 * on `clock` while the work runs (and while `holdWhile`, when given, returns true). `start`: the
 * run's first step, committed with the claim when the run has none and the journal can (`started`).
 */
export async function claimRun(
  journal: RunJournal,
  runId: string,
  options: { holder: string; leaseMs: number; clock: Clock; holdWhile?: (() => boolean) | undefined; start?: RunStep | undefined },
): Promise<ClaimResult> {
  const { holder, leaseMs, clock } = options;
  const opened = await journal.open(runId, { holder, leaseMs }, options.start);
  if (!opened.claimed) return { ok: false, holder: opened.holder };
  let lost = false;
  const renewing = repeatEvery(clock, leaseMs / 3, async () => {
    // the consumer is going away (its queue lease is given up): let the claim lapse with it
    if (options.holdWhile && !options.holdWhile()) return false;
    try {
      if (await journal.renew(runId, holder, leaseMs)) return true;
    } catch {
      return true; // tried again at the next interval: two more tries fit in the lease
    }
    lost = true;
    return false;
  });
  return {
    ok: true,
    started: opened.started === true,
    checkpoint: opened.checkpoint,
    messages: opened.messages,
    claim: {
      release: async () => {
        await renewing.stop();
        if (!lost) await journal.release(runId, holder).catch(() => undefined);
      },
      forget: async () => {
        await renewing.stop();
      },
    },
  };
}
