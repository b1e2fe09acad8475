/** The prefix of `originalMessageId` of a run that ran in Restate: `restate:<service>/<runId>`. */
export const RESTATE_ENTRY_PREFIX = 'restate:';

/** The message id (and dead-letter pointer) of a run of the Restate virtual object `service`: `restate:<service>/<runId>`. */
export function restateMessageId(service: string, runId: string): string {
  return `${RESTATE_ENTRY_PREFIX}${service}/${runId}`;
}

/** The virtual object and key a `restate:<service>/<runId>` pointer names, or `undefined` for another pointer. */
export function parseRestatePointer(messageId: unknown): { service: string; runId: string } | undefined {
  if (typeof messageId !== 'string' || !messageId.startsWith(RESTATE_ENTRY_PREFIX)) return undefined;
  const rest = messageId.slice(RESTATE_ENTRY_PREFIX.length);
  const slash = rest.indexOf('/');
  if (slash <= 0 || slash === rest.length - 1) return undefined;
  return { service: rest.slice(0, slash), runId: rest.slice(slash + 1) };
}
