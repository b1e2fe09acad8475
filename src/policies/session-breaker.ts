import { ToolrunError } from '../ground/toolrun-error.ts';

/** Options of the per-session circuit breakers. */
export interface SessionBreakerOptions {
  /** Consecutive counted failures of one tool in one session that cut it off. @defaultValue 3 */
  failureThreshold: number;
  /** Sessions remembered at once; the least recently used is forgotten beyond it. @defaultValue 10_000 */
  maxSessions: number;
  /**
   * Tool names remembered per session; beyond it the least recently failed one is forgotten. Names
   * come from the model (a hallucinated name is counted under the name it sent), so they are
   * bounded like sessions. @defaultValue 256
   */
  maxToolsPerSession: number;
}

/** The default per-session breaker options: open after 3 consecutive failures, at most 10,000 sessions of 256 tools each. */
export const DEFAULT_SESSION_BREAKER_OPTIONS: SessionBreakerOptions = Object.freeze({ failureThreshold: 3, maxSessions: 10_000, maxToolsPerSession: 256 });

/**
 * Tool names (and session ids) longer than this many characters are cut to it to make the key, so a
 * 1 MB hallucinated name costs 256 characters of memory; two names alike in their first 256
 * characters share one breaker.
 */
export const MAX_SESSION_BREAKER_KEY_LENGTH = 256;

/**
 * A failure as the per-session breaker sees it:
 * - `counted`: an environment, permission or logic failure — always counts;
 * - `invalid-arguments`: an `invalid_parameter` failure with the fingerprint of the arguments
 *   (see `fingerprintArguments`) — counts only when the same failing arguments were already sent
 *   since the last success (the model looping on one bad call); a new attempt with different
 *   arguments is the model correcting itself and does not count (nor does it reset the count).
 */
export type SessionFailure = { kind: 'counted' } | { kind: 'invalid-arguments'; fingerprint: string };

/** The state of one tool in one session. `open` = the tool is cut off for this session. */
export interface SessionBreakerState {
  state: 'closed' | 'open';
  consecutiveFailures: number;
}

/**
 * The per-session circuit breakers, one per (session, tool): a tool that failed
 * `failureThreshold` times in a row in one session is cut off for that session; a success resets
 * its count. Any name may be a key, also one that is not a registered tool (a hallucinated name the
 * model keeps calling). In memory, bounded by `maxSessions` (least recently used sessions are
 * forgotten), `maxToolsPerSession` and a key length of 256 characters.
 * Synchronous; safe to share between concurrent calls of one process.
 */
export interface SessionBreakers {
  /** Reads the state; `open` = this tool is cut off for this session. Does not create state. */
  check(sessionId: string, toolName: string): SessionBreakerState;
  /** A successful call: the count and the remembered failing arguments are cleared; the breaker closes. */
  recordSuccess(sessionId: string, toolName: string): void;
  /**
   * A failed call (see {@link SessionFailure} for what counts). Returns the new state, and
   * `opened: true` only for the failure that crossed the threshold.
   */
  recordFailure(sessionId: string, toolName: string, failure: SessionFailure): SessionBreakerState & { opened: boolean };
  /** Forgets one session, or every session when `sessionId` is omitted. */
  reset(sessionId?: string): void;
}

/** The state of a tool that has not failed in a session since its last success (shared, frozen). */
const NEVER_FAILED: SessionBreakerState = Object.freeze({ state: 'closed', consecutiveFailures: 0 });

/** How many distinct failing argument fingerprints are remembered per (session, tool). */
const MAX_FINGERPRINTS = 32;

interface ToolEntry {
  consecutiveFailures: number;
  /** Fingerprints of failing arguments since the last success, oldest first. */
  fingerprints: string[];
}

/**
 * Creates the per-session breakers.
 *
 * @throws ToolrunError `INVALID_OPTIONS` when `failureThreshold`, `maxSessions` or `maxToolsPerSession` is not an integer ≥ 1.
 */
export function createSessionBreakers(options?: Partial<SessionBreakerOptions>): SessionBreakers {
  const failureThreshold = options?.failureThreshold ?? DEFAULT_SESSION_BREAKER_OPTIONS.failureThreshold;
  const maxSessions = options?.maxSessions ?? DEFAULT_SESSION_BREAKER_OPTIONS.maxSessions;
  const maxToolsPerSession = options?.maxToolsPerSession ?? DEFAULT_SESSION_BREAKER_OPTIONS.maxToolsPerSession;
  for (const [name, value] of [
    ['failureThreshold', failureThreshold],
    ['maxSessions', maxSessions],
    ['maxToolsPerSession', maxToolsPerSession],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) {
      throw new ToolrunError('INVALID_OPTIONS', `session breaker: ${name} must be an integer ≥ 1, received ${String(value)}`);
    }
  }
  /** Sessions in least-recently-used order (a Map iterates in insertion order). */
  const sessions = new Map<string, Map<string, ToolEntry>>();
  /** The session last in `sessions` (the most recently used), when known: touching it moves nothing. */
  let newest: string | undefined;

  const touch = (sessionId: string): Map<string, ToolEntry> | undefined => {
    const tools = sessions.get(sessionId);
    if (tools !== undefined && sessionId !== newest) {
      sessions.delete(sessionId);
      sessions.set(sessionId, tools);
      newest = sessionId;
    }
    return tools;
  };
  const forget = (sessionId: string): void => {
    sessions.delete(sessionId);
    if (sessionId === newest) newest = undefined;
  };

  const stateOf = (entry: ToolEntry | undefined): SessionBreakerState => {
    const consecutiveFailures = entry?.consecutiveFailures ?? 0;
    return { state: consecutiveFailures >= failureThreshold ? 'open' : 'closed', consecutiveFailures };
  };

  return {
    check(rawSessionId, rawToolName) {
      const entry = touch(keyOf(rawSessionId))?.get(keyOf(rawToolName));
      return entry === undefined ? NEVER_FAILED : stateOf(entry);
    },
    recordSuccess(rawSessionId, rawToolName) {
      const sessionId = keyOf(rawSessionId);
      const tools = touch(sessionId);
      if (tools === undefined) return;
      tools.delete(keyOf(rawToolName));
      if (tools.size === 0) forget(sessionId);
    },
    recordFailure(rawSessionId, rawToolName, failure) {
      const sessionId = keyOf(rawSessionId);
      const toolName = keyOf(rawToolName);
      let tools = touch(sessionId);
      if (tools === undefined) {
        tools = new Map();
        sessions.set(sessionId, tools);
        newest = sessionId;
        if (sessions.size > maxSessions) {
          const oldest = sessions.keys().next().value;
          if (oldest !== undefined) forget(oldest);
        }
      }
      let entry = tools.get(toolName);
      if (entry === undefined) {
        entry = { consecutiveFailures: 0, fingerprints: [] };
      } else {
        tools.delete(toolName);
      }
      // most recently failed last; the least recently failed is forgotten beyond the bound
      tools.set(toolName, entry);
      if (tools.size > maxToolsPerSession) {
        const oldest = tools.keys().next().value;
        if (oldest !== undefined) tools.delete(oldest);
      }
      const before = stateOf(entry).state;
      let counts = true;
      if (failure.kind === 'invalid-arguments') {
        counts = entry.fingerprints.includes(failure.fingerprint);
        if (!counts) {
          entry.fingerprints.push(failure.fingerprint);
          if (entry.fingerprints.length > MAX_FINGERPRINTS) entry.fingerprints.shift();
        }
      }
      if (counts) entry.consecutiveFailures += 1;
      const after = stateOf(entry);
      return { ...after, opened: before === 'closed' && after.state === 'open' };
    },
    reset(sessionId) {
      if (sessionId === undefined) {
        sessions.clear();
        newest = undefined;
      } else forget(keyOf(sessionId));
    },
  };
}

function keyOf(name: string): string {
  const text = typeof name === 'string' ? name : String(name);
  return text.length > MAX_SESSION_BREAKER_KEY_LENGTH ? text.slice(0, MAX_SESSION_BREAKER_KEY_LENGTH) : text;
}
