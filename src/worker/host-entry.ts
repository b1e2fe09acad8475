/**
 * How a tool-DLQ entry says it was dead-lettered by a host (an SDK's own loop, a durable engine)
 * rather than by toolrun's own loop: a host run has no queue message, so the entry's
 * `originalMessageId` is `<host>:<runId>`.
 */

/** A host name: a lower-case letter, then lower-case letters, digits, `-` or `.`; at most 64 characters (`ai-sdk`, `anthropic`, `dbos`). */
const HOST_NAME = /^[a-z][a-z0-9.-]{0,63}$/;

/** Whether `name` can name a host (see {@link hostEntryMessageId}). */
export function isHostName(name: unknown): name is string {
  return typeof name === 'string' && HOST_NAME.test(name);
}

/**
 * The `originalMessageId` of a tool-DLQ entry a host run wrote: `<host>:<runId>` (`ai-sdk:run_1f…`).
 *
 * @throws TypeError when `host` is not a host name (a lower-case letter, then `[a-z0-9.-]`, at most 64 characters).
 */
export function hostEntryMessageId(host: string, runId: string): string {
  if (!isHostName(host)) throw new TypeError(`not a host name: ${JSON.stringify(host)} (a lower-case letter, then [a-z0-9.-], at most 64 characters)`);
  return `${host}:${runId}`;
}

/**
 * The host that dead-lettered `entry`, or `undefined` for an entry of toolrun's own loop: its
 * `originalMessageId` is exactly `<host>:<runId>` with the entry's own `runId` (a queue message id
 * that merely contains a colon is not taken for a host).
 */
export function hostOfEntry(entry: unknown): string | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined;
  const { originalMessageId, runId } = entry as { originalMessageId?: unknown; runId?: unknown };
  if (typeof originalMessageId !== 'string' || typeof runId !== 'string' || runId === '') return undefined;
  if (!originalMessageId.endsWith(`:${runId}`)) return undefined;
  const host = originalMessageId.slice(0, originalMessageId.length - runId.length - 1);
  return isHostName(host) ? host : undefined;
}
