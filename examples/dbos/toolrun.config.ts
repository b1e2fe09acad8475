/**
 * The config of `toolrun dlq replay|drain` and `toolrun dashboard` for an app whose agent runs in
 * DBOS: entries with `originalMessageId: 'dbos:<runId>'` are replayed by DBOS's fork of the run's
 * workflow, executed by the app's DBOS workers; this process only needs a `DBOSClient` on DBOS's
 * system database (`DBOS_SYSTEM_DATABASE_URL`), made the first time a DBOS entry is replayed.
 *
 *   DBOS_SYSTEM_DATABASE_URL=postgres://… toolrun dlq replay 7 --store 'postgres://…?schema=toolrun' --config examples/dbos/toolrun.config.ts
 */
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import { defineConfig, type Model } from '../../src/index.ts';
import { createDbosReplayer } from '../../src/engines/dbos/index.ts';

// toolrun's own runs (none in this app) would need the model; DBOS's workers call it for DBOS runs
const model: Model = async () => ({ text: 'this app runs its agent in DBOS', usage: { input: 0, output: 0 } });

export default defineConfig(({ env }) => ({
  model,
  tools: [],
  hosts: {
    dbos: createDbosReplayer({
      control: () => DBOSClient.create({ systemDatabaseUrl: env.DBOS_SYSTEM_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/dbos' }),
    }),
  },
}));
