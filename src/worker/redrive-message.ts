/**
 * What every redrive of a message-DLQ entry shares (`toolrun dlq redrive` and the dashboard's): the
 * claim it takes on the entry first, and the deterministic run-queue id it enqueues the message
 * under, so a repeat of a redrive that died before the entry's removal enqueues nothing new.
 */
import { idWithSuffix, keyOfId } from '../ground/identifier-bound.ts';

/** How long a redrive holds its claim on a message-DLQ entry (ms): far more than one enqueue takes. */
export const REDRIVE_CLAIM_MS = 60_000;

/**
 * The key a redrive claims message-DLQ entry `entryId` under in `stores.claims`: `dlq:message:<entry
 * id>` (for an id over `MAX_ID_BYTES`, which names no entry, its digest: the claim is taken, the
 * entry is not found).
 */
export function redriveClaimKey(entryId: string): string {
  return keyOfId('dlq:message:', entryId);
}

/**
 * The run-queue id a redriven message gets: `<message id>.redrive-<entry id>`, with `message` for an
 * entry whose message id is not a non-empty string, and `sha256:<digest of the message id>` in
 * place of a message id too long for the result to stay within `MAX_ID_BYTES`.
 */
export function redriveMessageId(entryId: string, messageId: unknown): string {
  return idWithSuffix(typeof messageId === 'string' && messageId !== '' ? messageId : 'message', `.redrive-${entryId}`);
}
