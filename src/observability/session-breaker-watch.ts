import type { ToolCallRecord } from '../core/tool-call-record.ts';

/**
 * Notices per-session breaker openings from the outside. The runtime does not announce them, so
 * an opening is counted once per (session, tool) when it first shows: a `TOO_MANY_FAILURES`
 * refusal, or a run the loop ended because the breaker was open (`session-breaker-open`). A
 * success of the tool in the session re-arms it. In memory, bounded.
 */
export interface SessionBreakerWatch {
  /** True when this call shows a newly opened breaker. */
  observeCall(record: ToolCallRecord): boolean;
  /** True when a run ending on an open breaker of `toolName` shows a newly opened one. */
  observeRunEnd(sessionId: string, toolName: string): boolean;
}

/** Creates a {@link SessionBreakerWatch} remembering at most `maxPairs` open (session, tool) pairs. @defaultValue 10_000 */
export function createSessionBreakerWatch(maxPairs = 10_000): SessionBreakerWatch {
  const open = new Set<string>();
  const opened = (key: string): boolean => {
    if (open.has(key)) return false;
    open.add(key);
    if (open.size > maxPairs) {
      const oldest = open.values().next().value;
      if (oldest !== undefined) open.delete(oldest);
    }
    return true;
  };
  return {
    observeCall(record) {
      if (record.result.status === 'success') {
        if (open.size > 0) open.delete(`${record.sessionId}\u0000${record.toolName}`);
        return false;
      }
      return record.result.error.code === 'TOO_MANY_FAILURES' && opened(`${record.sessionId}\u0000${record.toolName}`);
    },
    observeRunEnd: (sessionId, toolName) => opened(`${sessionId}\u0000${toolName}`),
  };
}
