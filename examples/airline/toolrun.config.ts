/**
 * The `toolrun` configuration of the airline workload: the model, tools and policies that
 * `toolrun dlq drain --config examples/airline/toolrun.config.ts` (and `toolrun worker`) use. The
 * demo's in-process worker builds the same configuration with the same function, so a drained run
 * continues exactly as it would have in the worker.
 *
 * Environment: `TOOLRUN_AIRLINE_URL`, the airline service (`npm start` sets it for its drain); when
 * it is not set — `toolrun dashboard` or `toolrun dlq replay` over the store `npm start` left — the
 * config starts an airline service of its own, without faults, for the command's lifetime, so a
 * replay reaches one. Optional: `TOOLRUN_AIRLINE_BREAKER_COOL_DOWN_MS`, and the `TOOLRUN_OPENAI_*`
 * variables for a real model
 * (see `workload/airline-worker-config.ts`). The data folder is found as everywhere else
 * (`TOOLRUN_DATA_DIR`, then `../shared/data`).
 */
import { defineConfig } from '../../src/worker/worker-config.ts';
import { startAirlineService } from './http-service.ts';
import { createAirlineWorkerConfig } from './workload/airline-worker-config.ts';

export default defineConfig(async ({ env }) => {
  let airlineUrl = env.TOOLRUN_AIRLINE_URL;
  if (airlineUrl === undefined || airlineUrl === '') {
    const service = await startAirlineService({ unref: true });
    airlineUrl = service.url;
    process.stderr.write(`airline config: TOOLRUN_AIRLINE_URL is not set: started an airline service without faults at ${airlineUrl}\n`);
  }
  const {
    modelKind: _modelKind,
    modelDescription: _modelDescription,
    ...config
  } = createAirlineWorkerConfig({
    env: { ...env, TOOLRUN_AIRLINE_URL: airlineUrl },
  });
  return config;
});
