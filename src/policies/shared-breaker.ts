import type { Clock } from '../ground/ports/clock.ts';
import type { BreakerStateStore } from '../ground/ports/stores.ts';
import type { JsonValue } from '../ground/ports/run-journal.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';

/** Circuit breaker states: `closed` lets calls through, `open` rejects them, `half-open` lets one probe through. */
export type BreakerState = 'closed' | 'open' | 'half-open';

/** Options of the shared (cross-run) breaker. */
export interface SharedBreakerOptions {
  /** Consecutive misconfiguration failures, across runs, that open the breaker. @defaultValue 2 */
  failureThreshold: number;
  /** How long the breaker stays open before one probe is let through, in ms. @defaultValue 30_000 */
  halfOpenAfterMs: number;
  /** A probe not reported within this many ms is considered lost and another may go. @defaultValue 60_000 */
  probeTimeoutMs: number;
}

/** The default shared breaker options. */
export const DEFAULT_SHARED_BREAKER_OPTIONS: SharedBreakerOptions = Object.freeze({
  failureThreshold: 2,
  halfOpenAfterMs: 30_000,
  probeTimeoutMs: 60_000,
});

/** The stored state of one shared breaker (JSON-serialisable). Times are ms since the epoch. */
export interface SharedBreakerRecord {
  state: BreakerState;
  /** Consecutive failures reported since the last success. */
  consecutiveFailures: number;
  /** When the breaker last opened (or re-opened); `null` when closed. */
  openedAt: number | null;
  /** When the probe in flight started; `null` when no probe is in flight. */
  probeStartedAt: number | null;
  /**
   * The token of the probe in flight (see {@link SharedBreakerAcquisition.probeId}); absent when no
   * probe is in flight, or when the probe was granted by a writer that did not issue tokens.
   */
  probeId?: string;
  /** How many times it went from closed to open (each one raised one alert). */
  openings: number;
  /** The message of the last failure reported, `null` after a success. */
  lastError: string | null;
}

/**
 * What the shared breaker reports, once per transition, to the caller whose store update made it:
 * - `breaker-open`: closed → open; raise one alert;
 * - `breaker-half-open`: open → half-open; this caller's call is the probe;
 * - `breaker-close`: open or half-open → closed (a success);
 * - `breaker-reopen`: half-open → open (the probe failed); not a new alert.
 */
export type SharedBreakerEvent =
  | { type: 'breaker-open'; key: string; openings: number; at: number; lastError: string }
  | { type: 'breaker-half-open'; key: string; at: number }
  | { type: 'breaker-close'; key: string; at: number }
  | { type: 'breaker-reopen'; key: string; at: number };

/**
 * The answer of {@link SharedBreaker.acquire}:
 * - `allow`: closed, call the guarded tool or model;
 * - `probe`: half-open and this caller is the one probe: make the call and report the outcome with
 *   `probeId` (`recordSuccess`, `recordFailure`, or `releaseProbe` when the outcome says nothing,
 *   e.g. the call never reached the tool);
 * - `reject`: open, or half-open with a probe in flight: do not make the call; `retryInMs` is when
 *   a probe may go at the earliest (open) or when the probe in flight is considered lost (half-open).
 */
export interface SharedBreakerAcquisition {
  decision: 'allow' | 'probe' | 'reject';
  state: BreakerState;
  retryInMs?: number;
  /**
   * With `probe` only: the token of this probe. Pass it back to `releaseProbe`, `recordFailure`
   * and `recordSuccess`, so that a late or repeated report of a probe that was already given up
   * (it outlived `probeTimeoutMs`, or was released twice) cannot free or fail the probe of another caller.
   */
  probeId?: string;
}

/**
 * A circuit breaker shared by every run and process that share the {@link BreakerStateStore}:
 * a tool (or a model) misconfigured for everyone opens it once, with one alert; after
 * `halfOpenAfterMs` exactly one probe is let through; its success closes the breaker, its failure
 * re-opens it; a probe never reported frees its slot after `probeTimeoutMs`, so it never sticks.
 * Every method is safe to call concurrently, from many processes: transitions happen inside the
 * store's atomic `update`, and events are emitted only by the caller whose update made them.
 */
export interface SharedBreaker {
  /**
   * Asks to make the call guarded by `key` (any string: a tool name, `model:<name>`…; each key is
   * an independent breaker). Does not write to the store while the breaker is closed. A granted
   * probe carries a `probeId`.
   */
  acquire(key: string): Promise<SharedBreakerAcquisition>;
  /**
   * A call succeeded: the breaker closes and its failure count resets. A success is evidence
   * whoever reports it, so it closes the breaker with or without `probeId`, even a stale one.
   * When this breaker's last read of `key` (its `acquire`) found it closed with no failures and it
   * has written nothing to `key` since, the success reads and writes nothing: a failure another
   * process recorded in between then stays counted (the two calls overlapped; either order is true).
   */
  recordSuccess(key: string, probeId?: string): Promise<void>;
  /**
   * A failure that is broken for everyone (credential rejected, endpoint gone) — the runtime
   * reports only those. `opened` is true for the one failure that opened a closed breaker (raise
   * the alert). While half-open, the failure of the probe in flight re-opens it (`breaker-reopen`,
   * `opened: false`). A report that is not the probe's — without `probeId` (a call let through
   * before the breaker opened, finishing late) or with the `probeId` of a probe given up after
   * `probeTimeoutMs` — is counted and kept as `lastError`, but leaves the probe in flight alone.
   */
  recordFailure(key: string, error: { message: string }, probeId?: string): Promise<{ opened: boolean }>;
  /**
   * A probe whose outcome says nothing about the call (the caller aborted, the call never reached
   * the tool): frees the probe slot at once, so the next `acquire` gets a probe. With `probeId`,
   * only that probe is freed: a stale or repeated release is a no-op. Without it (the older call
   * shape), whatever probe is in flight is freed.
   */
  releaseProbe(key: string, probeId?: string): Promise<void>;
  /** The stored record, or `undefined` when the key was never reported on. */
  state(key: string): Promise<SharedBreakerRecord | undefined>;
}

/** The longest `lastError` kept in the record, in characters. */
const MAX_ERROR_LENGTH = 500;

/** A closed breaker with no history. */
export const INITIAL_SHARED_BREAKER_RECORD: SharedBreakerRecord = Object.freeze({
  state: 'closed',
  consecutiveFailures: 0,
  openedAt: null,
  probeStartedAt: null,
  openings: 0,
  lastError: null,
});

/**
 * The pure transition of an acquire at `nowMs`: the next record and this caller's acquisition.
 * Closed → allow (unchanged). Open before `halfOpenAfterMs` → reject. Open after it → half-open with
 * `probeStartedAt = nowMs`, probe. Half-open with a live probe → reject; with none (released) or a
 * lost one (older than `probeTimeoutMs`) → `probeStartedAt = nowMs`, probe. A granted probe is
 * recorded with `probeId` and returns it, when one is given.
 */
export function transitionOnAcquire(
  record: SharedBreakerRecord | undefined,
  nowMs: number,
  options: SharedBreakerOptions,
  probeId?: string,
): { next: SharedBreakerRecord; acquisition: SharedBreakerAcquisition } {
  const token = probeId === undefined ? {} : { probeId };
  const current = record ?? INITIAL_SHARED_BREAKER_RECORD;
  switch (current.state) {
    case 'closed':
      return { next: current, acquisition: { decision: 'allow', state: 'closed' } };
    case 'open': {
      const halfOpensAt = (current.openedAt ?? nowMs) + options.halfOpenAfterMs;
      if (nowMs < halfOpensAt) {
        return { next: current, acquisition: { decision: 'reject', state: 'open', retryInMs: halfOpensAt - nowMs } };
      }
      return {
        next: { ...withoutProbeId(current), state: 'half-open', probeStartedAt: nowMs, ...token },
        acquisition: { decision: 'probe', state: 'half-open', ...token },
      };
    }
    case 'half-open': {
      if (current.probeStartedAt !== null) {
        const lostAt = current.probeStartedAt + options.probeTimeoutMs;
        if (nowMs < lostAt) {
          return { next: current, acquisition: { decision: 'reject', state: 'half-open', retryInMs: lostAt - nowMs } };
        }
      }
      return { next: { ...withoutProbeId(current), probeStartedAt: nowMs, ...token }, acquisition: { decision: 'probe', state: 'half-open', ...token } };
    }
  }
}

/** The pure transition of a success: closed, count and probe cleared, `lastError` cleared; `openings` kept. */
export function transitionOnSuccess(record: SharedBreakerRecord | undefined): SharedBreakerRecord {
  return {
    ...withoutProbeId(record ?? INITIAL_SHARED_BREAKER_RECORD),
    state: 'closed',
    consecutiveFailures: 0,
    openedAt: null,
    probeStartedAt: null,
    lastError: null,
  };
}

/**
 * Whether a report carrying `probeId` concerns the probe in flight of `record`. A report without a
 * token while a probe holds one comes from a call that is not the probe (one let through before
 * the breaker opened, finishing late): it is not. A record without a token (its probe was
 * released) takes any report.
 */
function isCurrentProbe(record: SharedBreakerRecord, probeId: string | undefined): boolean {
  return record.probeId === undefined || record.probeId === probeId;
}

function withoutProbeId(record: SharedBreakerRecord): SharedBreakerRecord {
  if (record.probeId === undefined) return record;
  const { probeId: _probeId, ...rest } = record;
  return rest;
}

/**
 * The pure transition of a misconfiguration failure (`report`: its message, and the probe's id when a probe reports it) at `nowMs`. Closed: the count grows and at
 * `failureThreshold` the breaker opens (`openings` + 1). Half-open: re-opens (`openedAt = nowMs`,
 * probe cleared; `openings` unchanged) — unless the report is not the probe's (no `probeId`, or
 * another probe's, while the probe in flight holds one), which only updates the count and `lastError`. Open: stays open, the
 * count and `lastError` are updated but `openedAt` is not (a late report does not extend the cool-down).
 */
export function transitionOnFailure(
  record: SharedBreakerRecord | undefined,
  { message, probeId }: { message: string; probeId?: string | undefined },
  nowMs: number,
  options: SharedBreakerOptions,
): SharedBreakerRecord {
  const current = record ?? INITIAL_SHARED_BREAKER_RECORD;
  const lastError = message.length > MAX_ERROR_LENGTH ? `${message.slice(0, MAX_ERROR_LENGTH)}…` : message;
  const consecutiveFailures = current.consecutiveFailures + 1;
  switch (current.state) {
    case 'closed':
      if (consecutiveFailures >= options.failureThreshold) {
        return { state: 'open', consecutiveFailures, openedAt: nowMs, probeStartedAt: null, openings: current.openings + 1, lastError };
      }
      return { ...current, consecutiveFailures, lastError };
    case 'half-open':
      if (current.probeStartedAt !== null && !isCurrentProbe(current, probeId)) return { ...current, consecutiveFailures, lastError };
      return { ...withoutProbeId(current), state: 'open', consecutiveFailures, openedAt: nowMs, probeStartedAt: null, lastError };
    case 'open':
      return { ...current, consecutiveFailures, lastError };
  }
}

/**
 * The pure transition of a released probe: half-open with its probe slot freed; other states
 * unchanged. With `probeId`, only when it names the probe in flight (see {@link SharedBreaker.releaseProbe}).
 */
export function transitionOnReleaseProbe(record: SharedBreakerRecord | undefined, probeId?: string): SharedBreakerRecord | undefined {
  if (record === undefined || record.state !== 'half-open' || record.probeStartedAt === null) return record;
  if (probeId !== undefined && !isCurrentProbe(record, probeId)) return record;
  return { ...withoutProbeId(record), probeStartedAt: null };
}

/**
 * Reads a stored value as a {@link SharedBreakerRecord}; `undefined` when it is absent or not one
 * (a corrupt record is treated as a closed breaker rather than crashing every call).
 */
export function parseSharedBreakerRecord(value: JsonValue | undefined): SharedBreakerRecord | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { state, consecutiveFailures, openedAt, probeStartedAt, openings, lastError, probeId } = value;
  if (state !== 'closed' && state !== 'open' && state !== 'half-open') return undefined;
  if (typeof consecutiveFailures !== 'number' || typeof openings !== 'number') return undefined;
  if (!isTimeOrNull(openedAt) || !isTimeOrNull(probeStartedAt)) return undefined;
  if (lastError !== null && typeof lastError !== 'string') return undefined;
  const record: SharedBreakerRecord = { state, consecutiveFailures, openedAt, probeStartedAt, openings, lastError };
  // A token is meaningful only with a probe in flight; one of another type is dropped, not fatal.
  if (typeof probeId === 'string' && probeStartedAt !== null) record.probeId = probeId;
  return record;
}

function isTimeOrNull(value: JsonValue | undefined): value is number | null {
  return value === null || typeof value === 'number';
}

/**
 * Creates a shared breaker over `store`. Each key is an independent breaker: any string — the tool
 * name for tools, `model:<name>` for a model, or anything else; keys are only compared and stored.
 * `onEvent` is called synchronously after the store update that made the transition; an exception
 * it throws is ignored (a listener must not change the breaker's decisions).
 *
 * `createProbeId` makes the token of each granted probe (unique across processes: by default
 * `crypto.randomUUID()`, or 128 random bits from `Math.random` where Web Crypto is missing).
 *
 * @throws ToolrunError `INVALID_OPTIONS` when `failureThreshold` is not an integer ≥ 1,
 * `halfOpenAfterMs` is negative or not finite, or `probeTimeoutMs` is not a finite positive number.
 */
export function createSharedBreaker(input: {
  store: BreakerStateStore;
  clock: Clock;
  options?: Partial<SharedBreakerOptions>;
  onEvent?: (event: SharedBreakerEvent) => void;
  createProbeId?: () => string;
}): SharedBreaker {
  const { store, clock, onEvent } = input;
  const createProbeId = input.createProbeId ?? defaultProbeId;
  const options = resolveSharedBreakerOptions(input.options);

  const emit = (event: SharedBreakerEvent): void => {
    if (onEvent === undefined) return;
    try {
      onEvent(event);
    } catch {
      // ignored: see the doc comment
    }
  };

  const update = async (key: string, transition: (record: SharedBreakerRecord | undefined) => SharedBreakerRecord | undefined) => {
    pristine.delete(key);
    const { previous, next } = await store.update<JsonValue>(key, (current) => {
      const record = parseSharedBreakerRecord(current);
      const result = transition(record);
      // a record that is absent stays absent: write back what was there
      return result === undefined ? (current ?? null) : (result as unknown as JsonValue);
    });
    return { previous: parseSharedBreakerRecord(previous), next: parseSharedBreakerRecord(next) };
  };

  const read = async (key: string) => parseSharedBreakerRecord(await store.get(key));
  // Keys whose last read here found the breaker closed with no failures: a success then has
  // nothing to reset, so it reads nothing either. Any write through this breaker forgets the key.
  const pristine = new Set<string>();
  const notePristine = (key: string, record: SharedBreakerRecord | undefined) => {
    if (record === undefined || (record.state === 'closed' && record.consecutiveFailures === 0)) {
      if (pristine.size >= 4096) pristine.clear();
      pristine.add(key);
    } else {
      pristine.delete(key);
    }
  };

  return {
    async acquire(key) {
      const current = await read(key);
      notePristine(key, current);
      if (current === undefined || current.state === 'closed') return { decision: 'allow', state: 'closed' };
      const nowMs = clock.now();
      const expected = transitionOnAcquire(current, nowMs, options);
      // a rejection changes nothing: answer it without a write (the next thousand runs stay cheap)
      if (expected.acquisition.decision === 'reject') return expected.acquisition;
      // one token per acquire, made before the update: fn stays pure if the store runs it twice
      const probeId = createProbeId();
      const { previous } = await update(key, (record) => transitionOnAcquire(record, nowMs, options, probeId).next);
      // fn is pure, so the committed transition is the one computed from `previous`
      const { acquisition } = transitionOnAcquire(previous, nowMs, options, probeId);
      if (acquisition.decision === 'probe' && previous?.state === 'open') emit({ type: 'breaker-half-open', key, at: nowMs });
      return acquisition;
    },
    async recordSuccess(key, _probeId) {
      if (pristine.has(key)) return;
      const current = await read(key);
      notePristine(key, current);
      if (current === undefined || (current.state === 'closed' && current.consecutiveFailures === 0)) return;
      const nowMs = clock.now();
      const { previous } = await update(key, transitionOnSuccess);
      if (previous !== undefined && previous.state !== 'closed') emit({ type: 'breaker-close', key, at: nowMs });
    },
    async recordFailure(key, error, probeId) {
      const nowMs = clock.now();
      const message = String(error.message);
      const { previous, next } = await update(key, (record) => transitionOnFailure(record, { message, probeId }, nowMs, options));
      const previousState = previous?.state ?? 'closed';
      if (next?.state === 'open' && previousState === 'closed') {
        emit({ type: 'breaker-open', key, openings: next.openings, at: nowMs, lastError: next.lastError ?? message });
        return { opened: true };
      }
      if (next?.state === 'open' && previousState === 'half-open') emit({ type: 'breaker-reopen', key, at: nowMs });
      return { opened: false };
    },
    async releaseProbe(key, probeId) {
      const current = await read(key);
      if (current === undefined || transitionOnReleaseProbe(current, probeId) === current) return;
      await update(key, (record) => transitionOnReleaseProbe(record, probeId));
    },
    state: read,
  };
}

/**
 * Merges `options` over {@link DEFAULT_SHARED_BREAKER_OPTIONS} and validates them.
 *
 * @throws ToolrunError `INVALID_OPTIONS` (see {@link createSharedBreaker}).
 */
export function resolveSharedBreakerOptions(options?: Partial<SharedBreakerOptions>): SharedBreakerOptions {
  const resolved: SharedBreakerOptions = { ...DEFAULT_SHARED_BREAKER_OPTIONS };
  for (const key of ['failureThreshold', 'halfOpenAfterMs', 'probeTimeoutMs'] as const) {
    const value = options?.[key];
    if (value !== undefined) resolved[key] = value;
  }
  const fail = (name: string, value: number, expected: string): never => {
    throw new ToolrunError('INVALID_OPTIONS', `shared breaker: ${name} must be ${expected}, received ${String(value)}`);
  };
  if (!Number.isInteger(resolved.failureThreshold) || resolved.failureThreshold < 1) fail('failureThreshold', resolved.failureThreshold, 'an integer ≥ 1');
  if (!Number.isFinite(resolved.halfOpenAfterMs) || resolved.halfOpenAfterMs < 0)
    fail('halfOpenAfterMs', resolved.halfOpenAfterMs, 'a finite number of ms ≥ 0');
  if (!Number.isFinite(resolved.probeTimeoutMs) || resolved.probeTimeoutMs <= 0) fail('probeTimeoutMs', resolved.probeTimeoutMs, 'a finite number of ms > 0');
  return resolved;
}

/** A probe token: `crypto.randomUUID()` where Web Crypto exists (Node, Bun, Deno, Workers), else 128 bits from `Math.random`. */
function defaultProbeId(): string {
  const randomUUID = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto?.randomUUID;
  if (typeof randomUUID === 'function') return randomUUID.call((globalThis as { crypto?: unknown }).crypto);
  let hex = '';
  for (let index = 0; index < 4; index++)
    hex += Math.floor(Math.random() * 0x1_0000_0000)
      .toString(16)
      .padStart(8, '0');
  return hex;
}
