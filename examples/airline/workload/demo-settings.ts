/**
 * The settings of the airline demo (`npm start`): the fault profile of the airline service, and
 * toolrun's policies scaled down so that the whole workload (1,341 runs with real waits) finishes
 * in well under a minute. Every scaled value is printed by the demo.
 */
import type { AirlineFaultProfile } from '../fault-profile.ts';

/** Everything that decides how the demo's failures happen and how toolrun treats them. */
export interface AirlineDemoSettings {
  /** Seed of the service's fault draw: the same seed gives the same faults. */
  seed: number;
  /** What the airline service does wrong while the worker runs (cleared before the drain). */
  faultProfile: AirlineFaultProfile;
  /** Per-attempt timeout of every airline tool, in ms. A hang costs this long. */
  toolTimeoutMs: number;
  /** Runtime-wide retry policy: attempts per call and the backoff between them. */
  retry: { maxAttempts: number; backoff: { baseDelayMs: number; factor: number; maxDelayMs: number; jitterMs: number } };
  /** Retries per tool per run before a further call of that tool ends the run in the tool DLQ. */
  toolRetryBudget: number;
  /** Model turns per run. */
  maxSteps: number;
  /** The cross-run breaker (state in the SQLite store, shared with the drain process). */
  sharedBreaker: { failureThreshold: number; halfOpenAfterMs: number; probeTimeoutMs: number };
  /** Conversations worked on at once (the runs of one conversation are always one after another). */
  conversationConcurrency: number;
}

/** The tool whose credential is "misconfigured" in the demo: it answers 401 to everyone. */
export const DEMO_UNAUTHORIZED_TOOL = 'search_onestop_flight';

/**
 * The demo's settings, with seed 42.
 *
 * Fault rates are per HTTP request: 503 for 6 %, 429 with `Retry-After: 1` for 3 %, a hang for 2 %
 * (the write, if any, is applied before the service goes silent), and `search_onestop_flight`
 * answers 401 to everyone. A read tool was chosen for the 401 because the write tools name a
 * fallback (`transfer_to_human_agents`): a write broken for everyone is handed back to the model with
 * that fallback instead of ending the run.
 *
 * Scaled down from the library defaults (3 attempts, backoff 500 ms × 2 + ≤ 100 ms, timeout 30 s,
 * breaker cool-down 30 s): backoff 200 ms × 2 + ≤ 50 ms, timeout 1 s, cool-down 4 s.
 */
export const AIRLINE_DEMO_SETTINGS: AirlineDemoSettings = Object.freeze({
  seed: 42,
  faultProfile: Object.freeze({
    unavailableRate: 0.1,
    rateLimitRate: 0.05,
    retryAfterSeconds: 1,
    hangRate: 0.03,
    hangAppliesMutation: true,
    hangMaxMs: 5_000,
    unauthorizedTools: [DEMO_UNAUTHORIZED_TOOL],
  }),
  toolTimeoutMs: 1_000,
  retry: Object.freeze({ maxAttempts: 3, backoff: Object.freeze({ baseDelayMs: 200, factor: 2, maxDelayMs: 2_000, jitterMs: 50 }) }),
  toolRetryBudget: 2,
  maxSteps: 30,
  sharedBreaker: Object.freeze({ failureThreshold: 2, halfOpenAfterMs: 4_000, probeTimeoutMs: 10_000 }),
  conversationConcurrency: 10,
}) as AirlineDemoSettings;

/** One line per setting group, for the demo's header. */
export function describeDemoSettings(settings: AirlineDemoSettings): string[] {
  const profile = settings.faultProfile;
  const percent = (rate: number | undefined) => `${Math.round((rate ?? 0) * 1000) / 10} %`;
  const backoff = settings.retry.backoff;
  return [
    `faults    seed ${settings.seed}: 503 ${percent(profile.unavailableRate)} · 429 ${percent(profile.rateLimitRate)} (Retry-After ${profile.retryAfterSeconds ?? 1} s) · hang ${percent(profile.hangRate)} · 401 for everyone on ${(profile.unauthorizedTools ?? []).join(', ') || 'no tool'}`,
    `policy    scaled down for the demo: ${settings.retry.maxAttempts} attempts, backoff ${backoff.baseDelayMs} ms × ${backoff.factor} + ≤ ${backoff.jitterMs} ms, timeout ${settings.toolTimeoutMs} ms, retry budget ${settings.toolRetryBudget}/tool/run, shared breaker opens after ${settings.sharedBreaker.failureThreshold} failures, cool-down ${settings.sharedBreaker.halfOpenAfterMs / 1000} s`,
  ];
}
