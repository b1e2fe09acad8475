import { createToolRuntime, type ToolRuntime, type ToolRuntimeOptions } from '../core/create-tool-runtime.ts';
import { systemClock, type Clock } from '../ground/ports/clock.ts';
import type { Stores } from '../ground/ports/stores.ts';
import type { ToolsInput } from '../core/tool-registry.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { createSharedBreaker, type SharedBreaker, type SharedBreakerOptions } from '../policies/shared-breaker.ts';
import { breakerWorkerEvent, type WorkerEvent } from './worker-events.ts';

/** Where a message, a replay or a worker gets its runtime and shared breaker from. */
export interface RuntimeSource {
  /** A ready runtime (its tools' shared breaker is whatever it was built with). */
  runtime?: ToolRuntime | undefined;
  /** Tools to build a runtime from, with a shared breaker on `stores.breakers`. */
  tools?: ToolsInput | undefined;
  runtimeOptions?: Omit<ToolRuntimeOptions, 'tools' | 'sharedBreaker'> | undefined;
  /** Cross-run breaker options (state in `stores.breakers`), or `false`. */
  sharedBreaker?: Partial<SharedBreakerOptions> | false | undefined;
  /** A ready shared breaker for the model (`model:<name>`); built on `stores.breakers` when absent. */
  modelBreaker?: SharedBreaker | undefined;
  onEvent?: ((event: WorkerEvent) => void) | undefined;
  clock?: Clock | undefined;
}

/** What {@link resolveRuntime} gives: the runtime and the shared breaker the model uses. */
export interface ResolvedRuntime {
  runtime: ToolRuntime;
  breaker: SharedBreaker | undefined;
}

/**
 * Builds the runtime and the shared breaker for `stores`: the given runtime, or one built from
 * `tools` (compiling their schemas) with a shared breaker on `stores.breakers`; the model's breaker
 * is `modelBreaker`, or that breaker, or one built on `stores.breakers`. Nothing is cached: a
 * worker, a drain or `createToolrun` resolves once and passes the result on (`runtime`,
 * `modelBreaker`), so nothing is shared between callers that did not share it themselves.
 *
 * @throws ToolrunError `INVALID_OPTIONS` without `tools` or `runtime`; the runtime's own
 * `INVALID_DEFINITION` / `INVALID_SCHEMA` for a bad tool.
 */
export function resolveRuntime(options: RuntimeSource, stores: Stores): ResolvedRuntime {
  if (!options.runtime && !options.tools) throw new ToolrunError('INVALID_OPTIONS', 'handleMessage needs `tools` or `runtime`');
  const clock = options.clock ?? options.runtimeOptions?.clock ?? options.runtime?.clock ?? systemClock;
  const breakerOptions: Partial<SharedBreakerOptions> | false = options.sharedBreaker ?? {};
  const onEvent = options.onEvent;
  const breaker =
    options.modelBreaker ??
    (breakerOptions === false
      ? undefined
      : createSharedBreaker({
          store: stores.breakers,
          // the breaker needs a clock: without one every transition threw (and was swallowed)
          clock,
          options: breakerOptions,
          onEvent: (event) => onEvent?.(breakerWorkerEvent(event)),
        }));
  const runtime =
    options.runtime ??
    createToolRuntime({
      ...options.runtimeOptions,
      clock,
      tools: options.tools!,
      ...(breaker ? { sharedBreaker: breaker } : {}),
    });
  return { runtime, breaker };
}
