import type { HostReplayer } from '../../worker/host-continuation.ts';
import type { DbosControl } from './dbos-api.ts';
import { replayDbosRun } from './replay-dbos-run.ts';

/** Options of {@link createDbosReplayer}. */
export interface DbosReplayerOptions {
  /**
   * The `DBOS` class (in a launched DBOS process), a `DBOSClient`, or a function that makes one the
   * first time a DBOS entry is replayed (`() => DBOSClient.create({ systemDatabaseUrl })`: a config
   * file of `toolrun dlq` or the dashboard then connects only when it needs to).
   */
  control: DbosControl | (() => DbosControl | Promise<DbosControl>);
  /** How long a replay waits for the fork's result, in ms (then `in_progress`). @defaultValue 600_000 */
  waitMs?: number;
}

/**
 * The DBOS host of toolrun's replay registry: `hosts: { dbos: createDbosReplayer({ control }) }` in
 * the config of `toolrun dlq replay|drain` and `toolrun dashboard`, or in `createToolrun`, routes
 * every entry whose `originalMessageId` is `dbos:<runId>` to {@link replayDbosRun} — DBOS's fork of
 * the run's workflow from the failed step (executed by the app's DBOS workers), or its resume for a
 * run DBOS gave up on. toolrun removes the entry when the replay reports `completed` or
 * `already_completed`. The control is made once and kept.
 */
export function createDbosReplayer(options: DbosReplayerOptions): HostReplayer {
  let control: Promise<DbosControl> | undefined;
  const given = options.control;
  // the DBOS class is a function too: a control is told by its methods
  const isControl = (value: typeof given): value is DbosControl => typeof (value as Partial<DbosControl>).forkWorkflow === 'function';
  const controlOf = () => (control ??= Promise.resolve(isControl(given) ? given : given()));
  return {
    replay: async (record, context) => {
      const outcome = await replayDbosRun(record.entry, {
        control: await controlOf(),
        stores: context.stores,
        claimLeaseMs: context.claimLeaseMs,
        ...(options.waitMs !== undefined ? { waitMs: options.waitMs } : {}),
      });
      return {
        status: outcome.status,
        modelCalls: outcome.modelCalls,
        text: outcome.text,
        message: outcome.message,
        ...(outcome.holder !== undefined ? { holder: outcome.holder } : {}),
      };
    },
  };
}
