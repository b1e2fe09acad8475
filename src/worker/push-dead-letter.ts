import { keyOfId } from '../ground/identifier-bound.ts';
import type { DeadLetterSink } from '../ground/dead-letter-entries.ts';

/**
 * The `pushOnce` key of the message-DLQ entry of a queue message: `message:<messageId>`, or for an
 * id over `MAX_ID_BYTES` (rejected for it) `message:sha256:<hex digest of its UTF-16 code units>`,
 * which every backend can key by and two such ids never share.
 */
export function messageDeadLetterKey(messageId: string): string {
  return keyOfId('message:', messageId);
}

/** The `pushOnce` key of the tool-DLQ entry of a run that failed at a step: `tool:<runId>:<stepIndex>`. */
export function toolDeadLetterKey(runId: string, stepIndex: number): string {
  return `tool:${runId}:${stepIndex}`;
}

/** The `pushOnce` key of the tool-DLQ entry of a run whose model failed at a step: `model:<runId>:<stepIndex>`. */
export function modelDeadLetterKey(runId: string, stepIndex: number): string {
  return `model:${runId}:${stepIndex}`;
}

/** The `pushOnce` key of the tool-DLQ entry of a poison run (delivery bound reached) at a step: `run:<runId>:<stepIndex>`. */
export function runDeadLetterKey(runId: string, stepIndex: number): string {
  return `run:${runId}:${stepIndex}`;
}

/**
 * Pushes a dead letter: with `pushOnce(key, entry)` when the sink has it and a key is given (a
 * repeat adds nothing), else with `push(entry)`. Returns whether an entry was added (always `true`
 * for `push`). Rejects when the sink does.
 */
export async function pushDeadLetter<T>(sink: DeadLetterSink<T>, key: string | undefined, entry: T): Promise<boolean> {
  if (key !== undefined && typeof sink.pushOnce === 'function') return (await sink.pushOnce(key, entry)).added;
  await sink.push(entry);
  return true;
}
