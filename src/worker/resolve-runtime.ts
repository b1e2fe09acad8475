import { createToolRuntime, type ToolRuntime } from '../core/create-tool-runtime.ts';
import { systemClock } from '../core/ports/clock.ts';
import type { Stores } from '../core/ports/stores.ts';
import { ToolrunError } from '../core/toolrun-error.ts';
import { createSharedBreaker, type SharedBreakerEvent, type SharedBreakerOptions } from '../policies/shared-breaker.ts';
import type { HandleMessageOptions } from './handle-message.ts';
import type { WorkerEvent } from './worker-events.ts';

interface CacheEntry {
  runtime: ToolRuntime;
  listener: ((event: WorkerEvent) => void) | undefined;
}

const cache = new WeakMap<object, WeakMap<Stores, CacheEntry>>();

function toWorkerEvent(event: SharedBreakerEvent): WorkerEvent {
  switch (event.type) {
    case 'breaker-open':
      return { type: 'breaker-open', toolName: event.key, openings: event.openings, lastError: event.lastError, at: event.at };
    case 'breaker-half-open':
      return { type: 'breaker-half-open', toolName: event.key, at: event.at };
    case 'breaker-close':
      return { type: 'breaker-close', toolName: event.key, at: event.at };
    case 'breaker-reopen':
      return { type: 'breaker-reopen', toolName: event.key, at: event.at };
  }
}

/**
 * The runtime for a message: the given one, or one built from `tools` with a shared breaker on
 * `stores.breakers`, cached per tools object and stores so schemas are compiled once.
 */
export function resolveRuntime(
  options: Pick<HandleMessageOptions, 'runtime' | 'tools' | 'runtimeOptions' | 'sharedBreaker' | 'onEvent' | 'clock'>,
  stores: Stores,
): ToolRuntime {
  if (options.runtime) return options.runtime;
  if (!options.tools) throw new ToolrunError('INVALID_OPTIONS', 'handleMessage needs `tools` or `runtime`');
  let byStores = cache.get(options.tools);
  if (!byStores) {
    byStores = new WeakMap();
    cache.set(options.tools, byStores);
  }
  let entry = byStores.get(stores);
  if (!entry) {
    const holder: CacheEntry = { runtime: undefined as unknown as ToolRuntime, listener: options.onEvent };
    const clock = options.clock ?? options.runtimeOptions?.clock;
    const breakerOptions: Partial<SharedBreakerOptions> | false = options.sharedBreaker ?? {};
    const sharedBreaker =
      breakerOptions === false
        ? undefined
        : createSharedBreaker({
            store: stores.breakers,
            // the breaker needs a clock: without one every transition threw (and was swallowed)
            clock: clock ?? systemClock,
            options: breakerOptions,
            onEvent: (event) => holder.listener?.(toWorkerEvent(event)),
          });
    holder.runtime = createToolRuntime({
      ...options.runtimeOptions,
      ...(clock ? { clock } : {}),
      tools: options.tools,
      ...(sharedBreaker ? { sharedBreaker } : {}),
    });
    entry = holder;
    byStores.set(stores, entry);
  }
  if (options.onEvent) entry.listener = options.onEvent;
  return entry.runtime;
}
