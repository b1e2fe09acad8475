import type { ToolRuntime } from '../core/create-tool-runtime.ts';
import type { ResumableEntry } from '../ground/dead-letter-entries.ts';
import type { DeadLetterQueue, DeadLetterRecord, Stores } from '../ground/ports/stores.ts';
import { isHostReplayer, registeredHost, type HostRegistry } from './host-continuation.ts';
import { replayHostRun, type HostRunReplayResult } from './replay-host-run.ts';
import { resolveRuntime, type RuntimeSource } from './resolve-runtime.ts';

/** What {@link routeHostReplay} needs of the replay's options. */
export interface HostRouteOptions extends RuntimeSource {
  hosts?: HostRegistry | undefined;
  stores?: Stores | undefined;
  claimLeaseMs?: number | undefined;
  removeExpired?: boolean | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * Replays the record of a host run (`host`, from its `originalMessageId`) with what the app
 * registered for that host in `options.hosts`: a continuation (toolrun's replay skeleton,
 * `replayHostRun`) or a replayer of its own (a durable engine; the entry is removed when it
 * reports the run completed). A host not registered, or no `stores`, leaves the entry where it is
 * (`invalid_entry` with a `message` saying what to register): it is never run by toolrun's own
 * loop and never removed.
 */
export async function routeHostReplay(
  record: DeadLetterRecord<ResumableEntry>,
  host: string,
  options: HostRouteOptions,
  dlq: Pick<DeadLetterQueue<ResumableEntry>, 'remove'>,
): Promise<HostRunReplayResult> {
  const runId = typeof record.entry?.runId === 'string' ? record.entry.runId : null;
  const base = { id: record.id, host, runId, modelCalls: 0, text: null, removed: false };
  const registration = registeredHost(options.hosts, host);
  if (registration === undefined)
    return {
      ...base,
      status: 'invalid_entry',
      message: `an entry of a ${host} run: no continuation is registered for host "${host}" (\`hosts["${host}"]\` of the config or of createToolrun); left in the tool DLQ`,
    };
  if (options.stores === undefined)
    return {
      ...base,
      status: 'invalid_entry',
      message: `an entry of a ${host} run: its replay needs the stores it was dead-lettered into; left in the tool DLQ`,
    };
  const { stores } = options;
  const runtime: ToolRuntime = ('runtime' in registration && registration.runtime) || resolveRuntime(options, stores).runtime;
  const claimLeaseMs = options.claimLeaseMs ?? 300_000;
  if (isHostReplayer(registration)) {
    const outcome = await registration.replay(record, { stores, runtime, claimLeaseMs, ...(options.signal ? { signal: options.signal } : {}) });
    const done = outcome.status === 'completed' || outcome.status === 'already_completed';
    return {
      ...base,
      status: outcome.status,
      modelCalls: outcome.modelCalls ?? 0,
      text: outcome.text ?? null,
      removed: done ? await dlq.remove(record.id) : false,
      ...(outcome.holder !== undefined ? { holder: outcome.holder } : {}),
      ...(outcome.message !== undefined ? { message: outcome.message } : {}),
    };
  }
  return replayHostRun(record, registration, {
    stores,
    runtime,
    dlq,
    claimLeaseMs,
    ...(options.removeExpired !== undefined ? { removeExpired: options.removeExpired } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
