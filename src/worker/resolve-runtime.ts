import { createToolRuntime, type ToolRuntime } from '../core/create-tool-runtime.ts';
import { systemClock } from '../core/ports/clock.ts';
import type { Stores } from '../core/ports/stores.ts';
import { ToolrunError } from '../core/toolrun-error.ts';
import { createSharedBreaker, type SharedBreaker, type SharedBreakerEvent, type SharedBreakerOptions } from '../policies/shared-breaker.ts';
import type { HandleMessageOptions } from './handle-message.ts';
import type { WorkerEvent } from './worker-events.ts';

interface CacheEntry {
  runtime: ToolRuntime;
  /** The shared breaker on `stores.breakers` (tools by name, the model as `model:<name>`). */
  breaker: SharedBreaker | undefined;
  listener: ((event: WorkerEvent) => void) | undefined;
}

/** What {@link resolveRuntime} gives a message: its runtime and the shared breaker the model uses. */
export interface ResolvedRuntime {
  runtime: ToolRuntime;
  breaker: SharedBreaker | undefined;
}

const cache = new WeakMap<object, WeakMap<Stores, CacheEntry>>();

function toWorkerEvent(event: SharedBreakerEvent): WorkerEvent {
  const target = event.key.startsWith('model:') ? ('model' as const) : ('tool' as const);
  switch (event.type) {
    case 'breaker-open':
      return { type: 'breaker-open', toolName: event.key, target, openings: event.openings, lastError: event.lastError, at: event.at };
    case 'breaker-half-open':
      return { type: 'breaker-half-open', toolName: event.key, target, at: event.at };
    case 'breaker-close':
      return { type: 'breaker-close', toolName: event.key, target, at: event.at };
    case 'breaker-reopen':
      return { type: 'breaker-reopen', toolName: event.key, target, at: event.at };
  }
}

/**
 * The runtime for a message and the shared breaker its model uses: the given runtime, or one built
 * from `tools` with a shared breaker on `stores.breakers`, cached per tools object and stores so
 * schemas are compiled once. With a given runtime, the model's breaker is built on `stores.breakers`
 * (cached per runtime and stores).
 */
export function resolveRuntime(
  options: Pick<HandleMessageOptions, 'runtime' | 'tools' | 'runtimeOptions' | 'sharedBreaker' | 'onEvent' | 'clock'>,
  stores: Stores,
): ResolvedRuntime {
  const key: object | undefined = options.runtime ?? options.tools;
  if (!key) throw new ToolrunError('INVALID_OPTIONS', 'handleMessage needs `tools` or `runtime`');
  let byStores = cache.get(key);
  if (!byStores) {
    byStores = new WeakMap();
    cache.set(key, byStores);
  }
  let entry = byStores.get(stores);
  if (!entry) {
    const holder: CacheEntry = { runtime: undefined as unknown as ToolRuntime, breaker: undefined, listener: options.onEvent };
    const clock = options.clock ?? options.runtimeOptions?.clock ?? options.runtime?.clock;
    const breakerOptions: Partial<SharedBreakerOptions> | false = options.sharedBreaker ?? {};
    holder.breaker =
      breakerOptions === false
        ? undefined
        : createSharedBreaker({
            store: stores.breakers,
            // the breaker needs a clock: without one every transition threw (and was swallowed)
            clock: clock ?? systemClock,
            options: breakerOptions,
            onEvent: (event) => holder.listener?.(toWorkerEvent(event)),
          });
    holder.runtime =
      options.runtime ??
      createToolRuntime({
        ...options.runtimeOptions,
        ...(clock ? { clock } : {}),
        tools: options.tools!,
        ...(holder.breaker ? { sharedBreaker: holder.breaker } : {}),
      });
    entry = holder;
    byStores.set(stores, entry);
  }
  if (options.onEvent) entry.listener = options.onEvent;
  return { runtime: entry.runtime, breaker: entry.breaker };
}
