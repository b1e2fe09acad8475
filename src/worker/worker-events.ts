/**
 * Events the worker raises for operators (noun-then-verb names). Alerts are `breaker-open`
 * (once per opening of a shared breaker, not once per run) and `dead-letter-full`.
 */
export type WorkerEvent =
  | { type: 'dead-letter-add'; queue: 'message' | 'tool'; reason: string; toolName?: string; at: number }
  | { type: 'breaker-open'; toolName: string; openings: number; lastError: string; at: number }
  | { type: 'breaker-half-open'; toolName: string; at: number }
  | { type: 'breaker-close'; toolName: string; at: number }
  | { type: 'breaker-reopen'; toolName: string; at: number }
  | { type: 'dead-letter-full'; queue: 'message' | 'tool'; size: number; maxEntries: number; at: number }
  | { type: 'dead-letter-below-bound'; queue: 'message' | 'tool'; size: number; at: number };
