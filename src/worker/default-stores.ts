import type { Stores } from '../core/ports/stores.ts';
import { createMemoryStores } from '../stores/memory/index.ts';

let defaultStores: Stores | undefined;

/** The process-wide in-memory stores used when `handleMessage` and `replayToolFailure` get none. */
export function getDefaultStores(): Stores {
  defaultStores ??= createMemoryStores();
  return defaultStores;
}
