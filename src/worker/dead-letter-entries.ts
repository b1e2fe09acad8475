/**
 * The two dead-letter entry formats (SPEC.md §2). A message failure is a defect of the work item;
 * a tool failure is a defect of the world the agent works in. They never share a queue.
 */

/** A message-DLQ entry: the raw message plus why it was rejected. The model was never called. */
export interface MessageFailureEntry {
  kind: 'message';
  /** The body exactly as received. */
  rawBody: string;
  reason: {
    /** `MALFORMED_JSON` | `INVALID_MESSAGE` | `BODY_TOO_LARGE`. */
    code: string;
    detail: string;
    /** Field-level problems, for `INVALID_MESSAGE`. */
    fields?: Array<{ path: string; problem: string; expected?: string; received?: string }>;
  };
  messageId?: string;
  /** ISO-8601. */
  receivedAt: string;
}

/**
 * A tool-DLQ entry: not the message (the run is half done) but what is needed to resume the run
 * from its failed step. Arguments are redacted; the conversation is referenced, never copied, so the
 * entry's size does not grow with the conversation.
 *
 * @see SPEC.md §2 `ToolFailureEntry`
 */
export interface ToolFailureEntry {
  kind: 'tool';
  runId: string;
  /** The step (turn of the loop) that failed. */
  stepIndex: number;
  toolName: string;
  /** Redacted by the same rules as logs. */
  toolArgs: unknown;
  /** In-band tries spent on this tool in the run. */
  attempts: number;
  lastError: { kind: string; status: number | null; message: string };
  /** `conv_…`: the stored messages of the run. */
  conversationRef: string;
  tokensSpent: { input: number; output: number };
  /** ISO-8601. */
  firstSeenAt: string;
  originalMessageId: string;
  /** Why in-band recovery ended: `retry-budget-exhausted`, `session-breaker-open`, `misconfiguration`, `circuit-open`. */
  reason: string;
}

/**
 * Anything with `push(entry)` (sync or async) is a DLQ sink: a plain array works. A sink that also
 * has `pushOnce` (every `DeadLetterQueue` does) is pushed to by key, so a redelivered message never
 * adds a second entry; with `push` alone a crash between the push and the acknowledgement can leave
 * a duplicate entry (never a lost one).
 */
export interface DeadLetterSink<T> {
  push(entry: T): unknown;
  /** See `DeadLetterQueue.pushOnce`: stores `entry` unless `key` was pushed before. */
  pushOnce?(key: string, entry: T): Promise<{ id: string; added: boolean }>;
}
