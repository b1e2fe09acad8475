/**
 * The check of a `stores` option at creation (createToolrun, createWorker): a Promise of a bundle
 * (`createPostgresStores(…)` without `await`) or an object missing a port would otherwise fail on
 * the first message with a `TypeError` far from its cause.
 */
const PORTS = ['conversations', 'runs', 'ledger', 'breakers', 'messageDlq', 'toolDlq', 'queue', 'claims', 'journal'] as const;

/** What is wrong with `stores` as a `Stores` bundle, in words; `undefined` when nothing is. */
export function storesProblem(stores: unknown): string | undefined {
  if (typeof stores !== 'object' || stores === null) return `\`stores\` must be a Stores bundle, received ${stores === null ? 'null' : typeof stores}`;
  if (typeof (stores as { then?: unknown }).then === 'function') {
    return '`stores` is a Promise: await the bundle first (`const stores = await createPostgresStores({ … })`)';
  }
  const missing = PORTS.filter((port) => typeof (stores as Record<string, unknown>)[port] !== 'object' || (stores as Record<string, unknown>)[port] === null);
  return missing.length > 0
    ? `\`stores\` lacks ${missing.map((port) => `\`${port}\``).join(', ')} (pass a whole Stores bundle, e.g. createSqliteStores(…))`
    : undefined;
}
