import type { Redactor } from '../core/redact.ts';
import { redactBounded } from '../core/build-failure.ts';
import type { RunJournal } from '../ground/ports/run-journal.ts';

/** `[object Tag]` of `value`, or `[object]` for a revoked Proxy (which throws even on that). */
function tagOf(value: unknown): string {
  try {
    return Object.prototype.toString.call(value);
  } catch {
    return `[${typeof value}]`;
  }
}

/** A thrown value as a bounded, redacted line (never throws). */
export function describeThrown(error: unknown, redactor: Redactor): string {
  let text: string;
  try {
    text = error instanceof Error ? `${error.name}: ${error.message}` : typeof error === 'string' ? error : (JSON.stringify(error) ?? String(error));
  } catch {
    text = tagOf(error);
  }
  return redactBounded(redactor, text, 1024);
}

/**
 * Records why a delivery of `messageId` failed (`RunJournal.recordDeliveryError`: redacted, at most
 * 1024 characters), so the entry of a message that reaches the delivery bound after a crash still
 * says what went wrong last. Never throws.
 */
export async function recordDeliveryError(journal: RunJournal, messageId: string, error: unknown, redactor: Redactor): Promise<void> {
  try {
    await journal.recordDeliveryError(messageId, describeThrown(error, redactor));
  } catch {
    // the store that failed the delivery may fail this too: the entry then says the cause is unknown
  }
}
