import { ToolrunError } from '../ground/toolrun-error.ts';

/**
 * Checks an adapter's `deadLetter` option: `stores` must be toolrun stores (a `toolDlq` with
 * `pushOnce`, and `remove` when `needsRemove`; a `journal` with `putConversation`), and `toolRetryBudget`,
 * when given, an integer from 0 to 100. `caller` names the adapter in the message.
 *
 * @throws ToolrunError `INVALID_OPTIONS` for an option that fails either check.
 */
export function checkDeadLetterOption(value: unknown, caller: string, needsRemove = false): void {
  const stores = (typeof value === 'object' && value !== null ? (value as { stores?: unknown }).stores : undefined) as
    { toolDlq?: { pushOnce?: unknown; remove?: unknown }; journal?: { putConversation?: unknown } } | undefined;
  const dlq = stores?.toolDlq;
  if (typeof dlq?.pushOnce !== 'function' || (needsRemove && typeof dlq.remove !== 'function') || typeof stores?.journal?.putConversation !== 'function')
    throw new ToolrunError('INVALID_OPTIONS', `${caller}: deadLetter.stores must be toolrun stores (with toolDlq and journal), e.g. createToolrun(...).stores`);
  const budget = (value as { toolRetryBudget?: unknown }).toolRetryBudget;
  if (budget !== undefined && !(Number.isInteger(budget) && (budget as number) >= 0 && (budget as number) <= 100))
    throw new ToolrunError('INVALID_OPTIONS', `${caller}: deadLetter.toolRetryBudget must be an integer from 0 to 100`);
}
