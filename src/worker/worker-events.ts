import type { MessageFailureEntry, ResumableEntry } from '../ground/dead-letter-entries.ts';
import type { SharedBreakerEvent } from '../policies/shared-breaker.ts';

/**
 * Events the worker raises for operators (noun-then-verb names). Alerts are `breaker-open`
 * (once per opening of a shared breaker, not once per run) and `dead-letter-full`.
 */
export type WorkerEvent =
  /** An entry was added: `kind` is the entry's (`message`; in the tool DLQ `tool`, `model` or `run`), `lastError` its redacted, bounded last error. */
  | {
      type: 'dead-letter-add';
      queue: 'message' | 'tool';
      reason: string;
      kind?: 'message' | 'tool' | 'model' | 'run';
      lastError?: string;
      toolName?: string;
      modelName?: string;
      runId?: string;
      messageId?: string;
      at: number;
    }
  /** `toolName` is the breaker's key: a tool name, or `model:<name>` for the shared model breaker (`target: 'model'`). */
  | { type: 'breaker-open'; toolName: string; target?: 'tool' | 'model'; openings: number; lastError: string; at: number }
  | { type: 'breaker-half-open'; toolName: string; target?: 'tool' | 'model'; at: number }
  | { type: 'breaker-close'; toolName: string; target?: 'tool' | 'model'; at: number }
  | { type: 'breaker-reopen'; toolName: string; target?: 'tool' | 'model'; at: number }
  /** A message whose run had already ended was delivered again (a redelivery, or the same id enqueued twice): acknowledged, nothing run again. */
  | { type: 'message-duplicate'; messageId: string | undefined; runId: string; runStatus: string; at: number }
  /** A delivery failed (the consumer threw): released for redelivery after `retryInMs`; `counted: false` for a transient store outage, which does not count toward `maxDeliveries`. */
  | { type: 'delivery-failed'; messageId: string; deliveries: number; maxDeliveries: number; counted: boolean; retryInMs: number; error: string; at: number }
  /** A message reached `maxDeliveries` failed deliveries and was dead-lettered (a poison message); the worker goes on. */
  | { type: 'delivery-limit-exceeded'; messageId: string; runId: string | null; deliveries: number; queue: 'message' | 'tool'; error: string; at: number }
  /** The run of a message is claimed by another consumer (a replay or drain, or a consumer whose lease was lost): released for later, not counted. */
  | { type: 'run-busy'; runId: string; messageId: string | undefined; holder: string | undefined; at: number }
  /** The lease of a message in hand ended before it was renewed; another consumer may take the message (its run stays claimed by this one until it ends). */
  | { type: 'lease-lost'; messageId: string; deliveries: number; at: number }
  /** A DLQ reached its bound of entries (`size ≥ maxEntries`) or of bytes (`bytes ≥ maxBytes`): the worker takes no new message until it is drained. */
  | { type: 'dead-letter-full'; queue: 'message' | 'tool'; size: number; maxEntries: number; bytes?: number; maxBytes?: number; at: number }
  | { type: 'dead-letter-below-bound'; queue: 'message' | 'tool'; size: number; at: number };

/** The `dead-letter-add` event of a message-DLQ entry (`messageId`: the message's own id, when it has one). */
export function messageDeadLetterAdded(entry: MessageFailureEntry, messageId: string | undefined, at: number): WorkerEvent {
  return {
    type: 'dead-letter-add',
    queue: 'message',
    kind: 'message',
    reason: entry.reason.code,
    lastError: entry.reason.detail,
    ...(messageId !== undefined ? { messageId } : {}),
    at,
  };
}

/** The `dead-letter-add` event of a resumable tool-DLQ entry (`tool`, `model` or `run`) of the run of message `messageId`. */
export function resumableDeadLetterAdded(entry: ResumableEntry, messageId: string | undefined, at: number): WorkerEvent {
  return {
    type: 'dead-letter-add',
    queue: 'tool',
    kind: entry.kind,
    reason: entry.reason,
    lastError: entry.lastError.message,
    ...(entry.kind === 'tool' ? { toolName: entry.toolName } : entry.kind === 'model' ? { modelName: entry.modelName } : {}),
    runId: entry.runId,
    ...(messageId !== undefined ? { messageId } : {}),
    at,
  };
}

/**
 * The worker event of a shared breaker's event: `toolName` is the breaker's key unless given (the
 * MCP proxy's keys carry a prefix it strips), `target` is `model` for a `model:` key unless given.
 */
export function breakerWorkerEvent(
  event: SharedBreakerEvent,
  toolName: string = event.key,
  target: 'tool' | 'model' = event.key.startsWith('model:') ? 'model' : 'tool',
): WorkerEvent {
  if (event.type === 'breaker-open') return { type: event.type, toolName, target, openings: event.openings, lastError: event.lastError, at: event.at };
  return { type: event.type, toolName, target, at: event.at };
}
