import type { FailureCause } from './failure-cause.ts';

/**
 * The two dead-letter entry formats. A message failure is a defect of the work item;
 * a tool failure is a defect of the world the agent works in. They never share a queue.
 */

/**
 * Why a message was dead-lettered without a resumable run:
 * - `MALFORMED_JSON`, `INVALID_MESSAGE`, `BODY_TOO_LARGE`: the body cannot be parsed or validated;
 * - `RUN_ID_CONFLICT`: the body names a `runId` that belongs to another message's run;
 * - `DELIVERY_LIMIT_EXCEEDED`: every delivery failed (a poison message) before its run had started.
 */
export type MessageFailureCode = 'MALFORMED_JSON' | 'INVALID_MESSAGE' | 'BODY_TOO_LARGE' | 'RUN_ID_CONFLICT' | 'DELIVERY_LIMIT_EXCEEDED';

/**
 * A message-DLQ entry: the raw message plus why it was rejected. The model was never called.
 *
 * `rawBody` is the one unredacted field of either DLQ (`rawBodyRedacted: false` says so): the
 * message's owner must see what was sent. A body over the size bound keeps its first
 * `maxDeadLetterBodyBytes` (`rawBodyTruncated: true`). Everything else — `reason.detail`,
 * `fields[].received` — is redacted and bounded.
 */
export interface MessageFailureEntry {
  kind: 'message';
  /** The body as received (cut only when it was over the size bound). Not redacted. */
  rawBody: string;
  /** Always `false`: the raw body is kept as received, secrets included; restrict who reads this DLQ. */
  rawBodyRedacted?: false;
  /** The body was longer than the entry's bound and was cut. */
  rawBodyTruncated?: boolean;
  reason: {
    code: MessageFailureCode | (string & {});
    detail: string;
    /** Field-level problems, for `INVALID_MESSAGE` (at most 20, `received` redacted). */
    fields?: Array<{ path: string; problem: string; expected?: string; received?: string }>;
    /** For `DELIVERY_LIMIT_EXCEEDED`: how many deliveries failed. */
    deliveries?: number;
  };
  messageId?: string;
  /** ISO-8601. */
  receivedAt: string;
}

/**
 * A tool-DLQ entry: not the message (the run is half done) but what is needed to resume the run
 * from its failed step. Arguments are redacted; the conversation is referenced, never copied, so the
 * entry's size does not grow with the conversation.
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
  lastError: FailureCause;
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
 * A tool-DLQ entry of a run whose MODEL could not be reached: the provider failed transiently past
 * the model policy's attempts, rejected the key, or kept answering with something that is not a
 * response. Resumable like a tool failure: a replay calls the model again at `stepIndex`.
 */
export interface ModelFailureEntry {
  kind: 'model';
  runId: string;
  /** The step whose model call failed. */
  stepIndex: number;
  /** The model's name (the shared model breaker's key is `model:<modelName>`). */
  modelName: string;
  /** Model calls attempted for the step (0: the shared model breaker was open). */
  attempts: number;
  /** `kind`: the classifier's kind (`rate_limit`, `server`, `auth`, `timeout`, `invalid_response`…); `message` redacted and bounded. */
  lastError: FailureCause & { code?: string };
  conversationRef: string;
  tokensSpent: { input: number; output: number };
  /** ISO-8601. */
  firstSeenAt: string;
  originalMessageId: string;
  /** `model-retries-exhausted`, `model-budget-exhausted`, `model-not-retryable`, `model-invalid-response`, `model-breaker-open`. */
  reason: string;
  /** The provider's requested wait, in ms, when it sent one. */
  retryAfterMs?: number;
}

/**
 * A tool-DLQ entry of a poison run: every delivery of its message failed (a bug, a store that
 * rejects the conversation, a crash) up to the delivery bound. Resumable from the run's last
 * checkpoint once the cause is fixed.
 */
export interface RunFailureEntry {
  kind: 'run';
  runId: string;
  /** The step of the last checkpoint. */
  stepIndex: number;
  /** Deliveries that failed. */
  deliveries: number;
  /** The last failure seen (redacted, bounded); `kind` is `crash` when the consumer stopped without a word. */
  lastError: FailureCause;
  conversationRef: string;
  tokensSpent: { input: number; output: number };
  /** ISO-8601. */
  firstSeenAt: string;
  originalMessageId: string;
  reason: 'delivery-limit-exceeded';
}

/** Every entry of the tool DLQ: each is a half-done run that a replay resumes. */
export type ResumableEntry = ToolFailureEntry | ModelFailureEntry | RunFailureEntry;

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
