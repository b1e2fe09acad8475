import type { Redactor } from '../core/redact.ts';
import { redactBounded } from '../core/build-failure.ts';
import type { Stores } from '../ground/ports/stores.ts';

/** The ledger key of the last failure of a message's deliveries. */
function deliveryErrorKey(messageId: string): string {
  return `message:${messageId}:last-delivery-error`;
}

/** A thrown value as a bounded, redacted line (never throws). */
export function describeThrown(error: unknown, redactor: Redactor): string {
  let text: string;
  try {
    text = error instanceof Error ? `${error.name}: ${error.message}` : typeof error === 'string' ? error : (JSON.stringify(error) ?? String(error));
  } catch {
    text = Object.prototype.toString.call(error);
  }
  return redactBounded(redactor, text, 1024);
}

/**
 * Records why a delivery of `messageId` failed (in the idempotency ledger), so the entry of a
 * message that reaches the delivery bound after a crash still says what went wrong last. Never throws.
 */
export async function recordDeliveryError(stores: Stores, messageId: string, error: unknown, redactor: Redactor): Promise<void> {
  try {
    const key = deliveryErrorKey(messageId);
    const text = describeThrown(error, redactor);
    // the same failure again (a poison message fails alike at every delivery) leaves the record as
    // it is: replacing it is a delete and a put, and a crash between the two would lose it
    const first = await stores.ledger.putIfAbsent(key, text);
    if (first.stored || first.value === text) return;
    await stores.ledger.delete(key);
    await stores.ledger.putIfAbsent(key, text);
  } catch {
    // the store that failed the delivery may fail this too: the entry then says the cause is unknown
  }
}

export async function readDeliveryError(stores: Stores, messageId: string | undefined): Promise<string | undefined> {
  if (messageId === undefined) return undefined;
  const value = await stores.ledger.get(deliveryErrorKey(messageId)).catch(() => undefined);
  return typeof value === 'string' ? value : undefined;
}
