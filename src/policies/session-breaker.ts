import { ToolrunError } from '../core/toolrun-error.ts';

/** Options of the per-session circuit breakers. */
export interface SessionBreakerOptions {
  /** Consecutive counted failures of one tool in one session that cut it off. @defaultValue 3 */
  failureThreshold: number;
  /** Sessions remembered at once; the least recently used is forgotten beyond it. @defaultValue 10_000 */
  maxSessions: number;
}

/** The default per-session breaker options (SPEC.md §1.6). */
export const DEFAULT_SESSION_BREAKER_OPTIONS: SessionBreakerOptions = Object.freeze({ failureThreshold: 3, maxSessions: 10_000 });

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
 * The per-session circuit breakers of SPEC.md §1.6, one per (session, tool): a tool that failed
 * `failureThreshold` times in a row in one session is cut off for that session; a success resets
 * its count. In memory, bounded by `maxSessions` (least recently used sessions are forgotten).
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
 * @throws ToolrunError `INVALID_OPTIONS` when `failureThreshold` or `maxSessions` is not an integer ≥ 1.
 * @see SPEC.md §1.6
 */
export function createSessionBreakers(options?: Partial<SessionBreakerOptions>): SessionBreakers {
  const failureThreshold = options?.failureThreshold ?? DEFAULT_SESSION_BREAKER_OPTIONS.failureThreshold;
  const maxSessions = options?.maxSessions ?? DEFAULT_SESSION_BREAKER_OPTIONS.maxSessions;
  for (const [name, value] of [['failureThreshold', failureThreshold], ['maxSessions', maxSessions]] as const) {
    if (!Number.isInteger(value) || value < 1) {
      throw new ToolrunError('INVALID_OPTIONS', `session breaker: ${name} must be an integer ≥ 1, received ${String(value)}`);
    }
  }
  /** Sessions in least-recently-used order (a Map iterates in insertion order). */
  const sessions = new Map<string, Map<string, ToolEntry>>();

  const touch = (sessionId: string): Map<string, ToolEntry> | undefined => {
    const tools = sessions.get(sessionId);
    if (tools !== undefined) {
      sessions.delete(sessionId);
      sessions.set(sessionId, tools);
    }
    return tools;
  };

  const stateOf = (entry: ToolEntry | undefined): SessionBreakerState => {
    const consecutiveFailures = entry?.consecutiveFailures ?? 0;
    return { state: consecutiveFailures >= failureThreshold ? 'open' : 'closed', consecutiveFailures };
  };

  return {
    check(sessionId, toolName) {
      return stateOf(touch(sessionId)?.get(toolName));
    },
    recordSuccess(sessionId, toolName) {
      const tools = touch(sessionId);
      if (tools === undefined) return;
      tools.delete(toolName);
      if (tools.size === 0) sessions.delete(sessionId);
    },
    recordFailure(sessionId, toolName, failure) {
      let tools = touch(sessionId);
      if (tools === undefined) {
        tools = new Map();
        sessions.set(sessionId, tools);
        if (sessions.size > maxSessions) {
          const oldest = sessions.keys().next().value;
          if (oldest !== undefined) sessions.delete(oldest);
        }
      }
      let entry = tools.get(toolName);
      if (entry === undefined) {
        entry = { consecutiveFailures: 0, fingerprints: [] };
        tools.set(toolName, entry);
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
      if (sessionId === undefined) sessions.clear();
      else sessions.delete(sessionId);
    },
  };
}
