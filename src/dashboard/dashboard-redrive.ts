/**
 * Redrive from the dashboard: a message-DLQ entry goes back on the run queue, with its raw body or
 * a fixed one, and leaves the message DLQ — once, as `toolrun dlq redrive` does it: the entry is
 * claimed first (`dlq:message:<id>` in `stores.claims`, the key the CLI claims too), the message id
 * is deterministic (a repeat of a redrive that died before the removal enqueues nothing: the queue
 * never takes an id twice), and the removal is the store's atomic `remove`.
 */
import { randomUUID } from 'node:crypto';
import type { MessageFailureEntry } from '../ground/dead-letter-entries.ts';
import type { Stores } from '../ground/ports/stores.ts';
import { checkRunRequestBody } from '../worker/parse-run-request.ts';
import { REDRIVE_CLAIM_MS, redriveClaimKey, redriveMessageId } from '../worker/redrive-message.ts';
import { ApiError } from './dashboard-http.ts';

/** What a redrive did. */
export interface RedriveOutcome {
  id: string;
  /** The run-queue id the message got: `<messageId>.redrive-<entry id>`, as the CLI gives it. */
  messageId: string;
  /** Whether this redrive removed the entry from the message DLQ (`false`: it had left already). */
  removed: boolean;
  /** `entry`: the raw body as received; `edited`: the body sent from the page. */
  body: 'entry' | 'edited';
}

/**
 * Redrives message-DLQ entry `id` with `body` (default: the entry's raw body).
 *
 * @throws ApiError 409 when another redrive holds the entry, 404 when it is not in the message DLQ,
 *   400 when there is no body to send or the body is not a run request (nothing is enqueued).
 */
export async function redriveMessageEntry(stores: Stores, id: string, body: string | undefined): Promise<RedriveOutcome> {
  const key = redriveClaimKey(id);
  const holder = `dashboard-redrive:${randomUUID()}`;
  if (!(await stores.claims.acquire(key, holder, REDRIVE_CLAIM_MS))) {
    throw new ApiError(409, 'REDRIVE_IN_PROGRESS', `entry ${id} is being redriven elsewhere (the CLI or another page): nothing was done`);
  }
  try {
    const record = await stores.messageDlq.get(id);
    if (record === undefined) throw new ApiError(404, 'NOT_FOUND', `no entry ${id} in the message DLQ (already redriven or purged)`);
    const entry = record.entry as Partial<MessageFailureEntry>;
    const text = body ?? entry.rawBody;
    if (typeof text !== 'string') throw new ApiError(400, 'INVALID_INPUT', `entry ${id} has no raw body: send the fixed body`);
    const problem = checkRunRequestBody(text);
    if (problem !== undefined) throw new ApiError(400, 'INVALID_INPUT', `the body is ${problem}; nothing was redriven`);
    const messageId = redriveMessageId(id, entry.messageId);
    await stores.queue.enqueue({ id: messageId, body: text });
    const removed = await stores.messageDlq.remove(id);
    return { id, messageId, removed, body: body === undefined ? 'entry' : 'edited' };
  } finally {
    await stores.claims.release(key, holder).catch(() => undefined);
  }
}
