/**
 * The `toolrun` configuration of the airline workload: the model, tools and policies that
 * `toolrun dlq drain --config examples/airline/toolrun.config.ts` (and `toolrun worker`) use. The
 * demo's in-process worker builds the same configuration with the same function, so a drained run
 * continues exactly as it would have in the worker.
 *
 * Environment: `TOOLRUN_AIRLINE_URL` (required; `npm start` sets it), optional
 * `TOOLRUN_AIRLINE_BREAKER_COOL_DOWN_MS`, and the `TOOLRUN_OPENAI_*` variables for a real model
 * (see `workload/airline-worker-config.ts`). The data folder is found as everywhere else
 * (`TOOLRUN_DATA_DIR`, then `../shared/data`).
 */
import { defineConfig } from '../../src/worker/worker-config.ts';
import { createAirlineWorkerConfig } from './workload/airline-worker-config.ts';

export default defineConfig(({ env }) => {
  const { modelKind: _modelKind, modelDescription: _modelDescription, ...config } = createAirlineWorkerConfig({ env });
  return config;
});
