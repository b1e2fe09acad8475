/** One call, as a model asked for it. */
export interface ToolRunInput {
  /** The tool name the model produced (resolved against the registry). */
  name: string;
  /** An object, or the raw argument string the model produced. */
  args?: unknown;
  callId?: string;
  /** Scope of the per-session breaker. @defaultValue the `runId` when one is given, else `'default'` */
  sessionId?: string;
  runId?: string;
  /** Cancels the call: the tool's signal is aborted and the envelope says `CANCELLED`. */
  signal?: AbortSignal;
  /** Stable key of this call across retries and replays. @defaultValue `${sessionId}:${callId}` (the session as defaulted) */
  idempotencyKey?: string;
  /** Caps the attempts of this call (the agent loop passes what is left of the run's retry budget). */
  maxAttempts?: number;
  /** Absolute deadline (epoch ms, on the runtime's clock), e.g. the run's; the call budget also applies. */
  deadlineAt?: number;
  /** Trace id to join logs; @defaultValue a new W3C trace id */
  traceId?: string;
}
