/**
 * The faults the local airline service injects, and the deterministic draw that decides them.
 */

/**
 * What the service does wrong, on purpose. Rates are probabilities in [0, 1] per request, drawn in
 * this order: `unavailableRate` (503), `rateLimitRate` (429 with `Retry-After`), `hangRate` (the
 * response is held until the client gives up). Their sum must not exceed 1.
 */
export interface AirlineFaultProfile {
  /** Share of requests answered `503 Service Unavailable`. @defaultValue 0 */
  unavailableRate?: number;
  /** Share of requests answered `429 Too Many Requests` with `Retry-After`. @defaultValue 0 */
  rateLimitRate?: number;
  /** The `Retry-After` of a 429, in seconds (0 allowed, for tests with a fake clock). @defaultValue 1 */
  retryAfterSeconds?: number;
  /** Share of requests that hang past the client's timeout. @defaultValue 0 */
  hangRate?: number;
  /**
   * Whether a hanging write is applied before the service goes silent (the realistic, ambiguous
   * case: the work was done, the answer never arrived) or not at all. A retry with the same
   * idempotency key gets the stored answer either way; without the key the write would be applied twice.
   * @defaultValue true
   */
  hangAppliesMutation?: boolean;
  /** A held response is dropped after this long even if the client never aborts. @defaultValue 30000 */
  hangMaxMs?: number;
  /** Tools that answer `401 Unauthorized` to everyone (a misconfigured credential). @defaultValue [] */
  unauthorizedTools?: string[];
}

/** The fault drawn for one request. */
export type AirlineFault = 'none' | 'unavailable' | 'rate_limit' | 'hang' | 'unauthorized';

/** No faults at all. */
export const NO_FAULTS: AirlineFaultProfile = {};

/**
 * A uniform number in [0, 1) from a string, stable across runs and platforms (FNV-1a 32-bit,
 * then the MurmurHash3 finaliser to spread the bits).
 */
export function hashToUnitInterval(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return (hash >>> 0) / 2 ** 32;
}

/** Identity of one request for the fault draw. */
export interface FaultDrawKey {
  seed: number | string;
  runId: string;
  toolName: string;
  /** 0-based index of the call among this run's calls of this tool. */
  callIndex: number;
  /** 1-based attempt of the call. */
  attempt: number;
}

/**
 * Decides the fault of one request: the same profile, seed and call identity always give the same
 * fault; another attempt of the same call draws again (so retries can succeed).
 */
export function drawFault(profile: AirlineFaultProfile, key: FaultDrawKey): AirlineFault {
  if (profile.unauthorizedTools?.includes(key.toolName)) return 'unauthorized';
  const draw = hashToUnitInterval(`${key.seed}|${key.runId}|${key.toolName}|${key.callIndex}|${key.attempt}`);
  let threshold = profile.unavailableRate ?? 0;
  if (draw < threshold) return 'unavailable';
  threshold += profile.rateLimitRate ?? 0;
  if (draw < threshold) return 'rate_limit';
  threshold += profile.hangRate ?? 0;
  if (draw < threshold) return 'hang';
  return 'none';
}
