import type { RunCheckpoint } from '../ground/ports/run-journal.ts';
import type { Stores } from '../ground/ports/stores.ts';
import { redactBounded } from '../core/build-failure.ts';
import type { RunFailureEntry } from '../ground/dead-letter-entries.ts';
import { describeThrown } from './delivery-errors.ts';
import { withQueues, type HandleMessageOptions, type HandleMessageResult, type RunMessage } from './handle-message-options.ts';
import { rejectedMessageEntry, runIdOf } from './parse-run-request.ts';
import { messageDeadLetterKey, pushDeadLetter } from './push-dead-letter.ts';
import { resolveRuntime } from './resolve-runtime.ts';
import { pushResumable } from './resumable-dead-letters.ts';
import { messageDeadLetterAdded, resumableDeadLetterAdded } from './worker-events.ts';

/** Options of {@link deadLetterPoisonMessage}. */
export interface PoisonMessageOptions extends HandleMessageOptions {
  stores: Stores;
  /** The last failure (a thrown value, or its recorded text); absent after crashes that left no word. */
  lastError: unknown;
  /** Deliveries that failed. */
  deliveries: number;
  /** The run id, when the body could be read. */
  runId?: string;
  /** The run's checkpoint as just read (`null`: none), so it is not read again. @defaultValue read through `stores.journal` */
  checkpoint?: RunCheckpoint | null;
}

/**
 * Dead-letters a message whose deliveries all failed (a poison message): when its run had started,
 * a resumable tool-DLQ entry of kind `run` (the run resumes from its last checkpoint on replay);
 * otherwise a message-DLQ entry `DELIVERY_LIMIT_EXCEEDED` with the raw body. Keyed, so a repeat adds
 * nothing. Raises `delivery-limit-exceeded` and `dead-letter-add`. Throws only when the DLQ does.
 */
export async function deadLetterPoisonMessage(message: RunMessage, given: PoisonMessageOptions): Promise<HandleMessageResult> {
  const options = withQueues(given, given.stores);
  const { stores } = options;
  const { runtime } = resolveRuntime(options, stores);
  const clock = options.clock ?? runtime.clock;
  const messageId = typeof message?.id === 'string' ? message.id : undefined;
  const error =
    options.lastError === undefined
      ? 'every delivery ended without a result (the consumer crashed, hung past its lease, or the store failed)'
      : typeof options.lastError === 'string'
        ? options.lastError
        : describeThrown(options.lastError, runtime.redactor);
  const runId = options.runId ?? runIdOf(message);
  let checkpoint: RunCheckpoint | undefined;
  if (options.checkpoint !== undefined && options.runId !== undefined) checkpoint = options.checkpoint ?? undefined;
  else if (runId !== undefined) {
    // the run's committed checkpoint, read without a claim
    const opened = await stores.journal.open(runId);
    checkpoint = opened.claimed ? opened.checkpoint : undefined;
  }
  if (checkpoint) {
    const entry: RunFailureEntry = {
      kind: 'run',
      runId: checkpoint.runId,
      stepIndex: checkpoint.stepIndex,
      deliveries: options.deliveries,
      lastError: { kind: options.lastError === undefined ? 'crash' : 'exception', status: null, message: redactBounded(runtime.redactor, error, 1024) },
      conversationRef: checkpoint.conversationRef,
      tokensSpent: { ...checkpoint.tokensSpent },
      firstSeenAt: new Date(clock.now()).toISOString(),
      originalMessageId: messageId ?? checkpoint.messageId,
      reason: 'delivery-limit-exceeded',
    };
    const added = await pushResumable(entry, stores.journal, options);
    if (added) {
      options.onEvent?.({
        type: 'delivery-limit-exceeded',
        messageId: messageId ?? '',
        runId: checkpoint.runId,
        deliveries: options.deliveries,
        queue: 'tool',
        error: entry.lastError.message,
        at: clock.now(),
      });
      options.onEvent?.(resumableDeadLetterAdded(entry, messageId, clock.now()));
    }
    return { status: 'delivery_limit_exceeded', runId: checkpoint.runId, messageId, queue: 'tool', deliveries: options.deliveries, alreadyFinished: !added };
  }
  const entry = rejectedMessageEntry(
    message,
    { code: 'DELIVERY_LIMIT_EXCEEDED', detail: `${options.deliveries} deliveries failed; the last: ${error}`, deliveries: options.deliveries },
    { receivedAt: new Date(clock.now()).toISOString(), redactor: runtime.redactor },
  );
  const added = await pushDeadLetter(options.queues.messageDlq, messageId === undefined ? undefined : messageDeadLetterKey(messageId), entry);
  if (added) {
    options.onEvent?.({
      type: 'delivery-limit-exceeded',
      messageId: messageId ?? '',
      runId: null,
      deliveries: options.deliveries,
      queue: 'message',
      error: entry.reason.detail,
      at: clock.now(),
    });
    options.onEvent?.(messageDeadLetterAdded(entry, messageId, clock.now()));
  }
  return { status: 'delivery_limit_exceeded', runId: null, messageId, queue: 'message', deliveries: options.deliveries, alreadyFinished: !added };
}
