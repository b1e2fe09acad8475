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

/** The durable engines among the hosts: their replay hands the run back to the engine. */
const ENGINE_HOSTS = new Set(['dbos', 'restate', 'temporal']);

/** Whether `host` is a durable engine (`dbos`, `restate`, `temporal`) rather than an SDK's loop or the MCP proxy. */
export function isEngineHost(host: string): boolean {
  return ENGINE_HOSTS.has(host);
}

/**
 * What a replay of an entry `host` dead-lettered will do, in one sentence for `toolrun dlq show`
 * and the dashboard: an MCP proxy's call is re-issued upstream (no model, no loop); a durable
 * engine's run is handed back to the engine; an SDK host's failed call runs again and the host's own
 * loop runs the remaining steps. Each needs `hosts.<host>` registered where the replay runs.
 */
export function hostReplayPlanText(host: string, toolName: string | undefined): string {
  const registered = `It needs \`hosts.${host}\` in the config (or createToolrun's hosts): without it the entry is left as it is (invalid_entry).`;
  const claim = 'The run is claimed first (a second replay at once does nothing: in_progress); the idempotency ledger keeps a write from being applied twice.';
  if (host === 'mcp')
    return `A replay re-issues the proxied call to ${toolName ?? '?'} upstream with the arguments as the client sent them; no model is called (an MCP client has no loop to resume). ${claim} ${registered}`;
  if (isEngineHost(host))
    return `A replay hands the run back to ${host}, which resumes it from the failed step (its earlier steps are not run again). ${claim} ${registered}`;
  return `A replay re-executes the failed call to ${toolName ?? '?'} with its real arguments from the stored conversation, then hands the conversation to ${host}'s own loop, which calls the model only for the remaining steps. ${claim} ${registered}`;
}
