import type { Stores } from '../../ground/ports/stores.ts';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import type { RunMessage } from '../../worker/handle-message-options.ts';
import { deadLetterPoisonMessage } from '../../worker/poison-message.ts';
import { restateMessageId } from './restate-pointer.ts';

/** Options of {@link sweepRestatePaused}. */
export interface SweepRestatePausedOptions {
  /** Restate's admin API, e.g. `http://127.0.0.1:9070`. */
  adminUrl: string;
  /** The agent's stores (where the runs' checkpoints and the DLQs are). */
  stores: Stores;
  /** The runtime of the agent's tools (redaction of the entries). */
  runtime: ToolRuntime;
  /** The agent's virtual object name. @defaultValue `'toolrun'` */
  service?: string;
  /** Headers of the admin requests (an `Authorization`…). @defaultValue none */
  headers?: Record<string, string>;
}

/** What one sweep did. */
export interface SweepRestatePausedReport {
  /** Paused `run` invocations dead-lettered (each then killed in Restate). */
  deadLettered: Array<{ invocationId: string; runId: string; queue: 'tool' | 'message' }>;
  /** Paused `replay` invocations killed (their entry was still in the tool DLQ). */
  replaysKilled: string[];
}

interface PausedInvocation {
  id: string;
  target_service_key: string;
  target_handler_name: string;
  last_failure?: string | null;
}

const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;

async function query<T>(options: SweepRestatePausedOptions, sql: string): Promise<T[]> {
  const response = await fetch(`${options.adminUrl.replace(/\/+$/, '')}/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...options.headers },
    body: JSON.stringify({ query: sql }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`Restate admin query failed: ${response.status} ${text.slice(0, 500)}`);
  return (JSON.parse(text) as { rows: T[] }).rows;
}

async function kill(options: SweepRestatePausedOptions, invocationId: string): Promise<void> {
  const response = await fetch(`${options.adminUrl.replace(/\/+$/, '')}/invocations/${encodeURIComponent(invocationId)}/kill`, {
    method: 'PATCH',
    ...(options.headers ? { headers: options.headers } : {}),
  });
  await response.arrayBuffer();
  if (!response.ok && response.status !== 404) throw new Error(`Restate refused to kill ${invocationId}: ${response.status}`);
}

/** The `run` request an invocation was started with (its journal's input), as the message a worker would have received. */
async function inputOf(options: SweepRestatePausedOptions, invocation: PausedInvocation): Promise<RunMessage> {
  const id = restateMessageId(invocation.target_service_key);
  const rows = await query<{ entry_json?: string }>(options, `SELECT entry_json FROM sys_journal WHERE id = ${quote(invocation.id)} AND index = 0`);
  try {
    const entry = JSON.parse(rows[0]?.entry_json ?? '{}') as { Command?: { Input?: { payload?: number[] } } };
    const payload = JSON.parse(Buffer.from(entry.Command?.Input?.payload ?? []).toString('utf8')) as { body?: unknown };
    return { body: typeof payload.body === 'string' ? payload.body : JSON.stringify(payload), id };
  } catch {
    return { body: '', id };
  }
}

/**
 * Dead-letters the runs Restate gave up on: an invocation of the agent's `run` handler that failed
 * outside any step at every attempt (a bug in a hook, a tool definition that throws) is paused by
 * Restate once its retry policy is spent (`onMaxAttempts: 'pause'`, the agent's default). Each one
 * found paused is dead-lettered as toolrun's worker dead-letters a poison message — in the tool DLQ
 * (`kind: 'run'`, resumable from its checkpoint) when the run had started, else in the message DLQ
 * with the request it was started with — then killed in Restate, so the run's key takes
 * invocations again. A paused `replay` invocation is killed only: its entry is still in the tool DLQ.
 *
 * Run it on a schedule (one sweeper at a time, or several: the push is keyed, so a second sweep of
 * the same invocation adds nothing, and a kill of a killed invocation is a no-op). A sweeper killed
 * between the push and the kill leaves the invocation paused; the next sweep kills it.
 *
 * @throws Error when the admin API cannot be reached or refuses a query; whatever the stores throw.
 */
export async function sweepRestatePaused(options: SweepRestatePausedOptions): Promise<SweepRestatePausedReport> {
  const service = options.service ?? 'toolrun';
  const paused = await query<PausedInvocation>(
    options,
    `SELECT id, target_service_key, target_handler_name, last_failure FROM sys_invocation WHERE target_service_name = ${quote(service)} AND status = 'paused'`,
  );
  const report: SweepRestatePausedReport = { deadLettered: [], replaysKilled: [] };
  for (const invocation of paused) {
    const runId = invocation.target_service_key;
    if (invocation.target_handler_name === 'run') {
      const message = await inputOf(options, invocation);
      const opened = await options.stores.journal.open(runId);
      const result = await deadLetterPoisonMessage(message, {
        model: async () => {
          throw new Error('a sweep calls no model');
        },
        runtime: options.runtime,
        stores: options.stores,
        lastError: `Restate paused the invocation ${invocation.id} after its retry policy${invocation.last_failure ? `: ${invocation.last_failure}` : ''}`,
        deliveries: 1,
        runId,
        checkpoint: (opened.claimed ? opened.checkpoint : undefined) ?? null,
      });
      report.deadLettered.push({ invocationId: invocation.id, runId, queue: result.status === 'delivery_limit_exceeded' ? result.queue : 'message' });
    } else if (invocation.target_handler_name === 'replay') {
      report.replaysKilled.push(invocation.id);
    } else {
      continue;
    }
    await kill(options, invocation.id);
    // the claim the invocation held (its holder is its id) ends now, not with its lease
    await options.stores.journal.release(runId, `restate:${invocation.id}`);
  }
  return report;
}
