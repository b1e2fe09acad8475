/**
 * The τ-bench airline tasks as the recovery eval's workload (`toolrun eval`): one task per τ-bench
 * task id (its first recorded gpt-4o conversation that was solved, reward 1), in task order, run
 * against the local airline HTTP service with the eval's faults sent as `x-inject-fault`.
 *
 * A task's turns are the conversation's runs (see `trajectories.ts`): the customer's message, the
 * tool calls gpt-4o made for it (arguments parsed), and its reply. Finds the data the way
 * `npm start` does (`locateTauBenchData`: `TOOLRUN_DATA_DIR`, `../shared/data/`, the download cache,
 * else a checked download).
 */
import { createHash } from 'node:crypto';
import type { EvalService, EvalTask, EvalWorkload, TaskTurn } from '../../src/eval/eval-task.ts';
import { canonicalJson } from '../../src/eval/eval-task.ts';
import { locateTauBenchData } from './fetch-tau-bench.ts';
import { startAirlineService } from './http-service.ts';
import { toolErrorFromResponse } from './http-tools.ts';
import { AIRLINE_WRITE_TOOLS } from './operations.ts';
import { loadAirlineToolSchemas } from './tool-schemas.ts';
import { loadAirlineTrajectories, splitTrajectoryIntoRuns, trajectoryKeyOf, type RecordedTrajectory } from './trajectories.ts';

function parseArgs(args: unknown): Record<string, unknown> {
  if (typeof args !== 'string') return (args ?? {}) as Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(args);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** One task from a recorded trajectory: its system prompt and one turn per run. */
export function evalTaskOf(trajectory: RecordedTrajectory): EvalTask {
  const turns: TaskTurn[] = splitTrajectoryIntoRuns(trajectory).map((run) => {
    const userMessage = run.messagesBefore[run.messagesBefore.length - 1]?.content ?? '';
    const calls = run.assistantTurns.flatMap((message) => (message.toolCalls ?? []).map((call) => ({ name: call.name, args: parseArgs(call.args) })));
    const last = run.assistantTurns[run.assistantTurns.length - 1];
    const reply = last?.role === 'assistant' && last.toolCalls === undefined ? (last.content ?? '') : '';
    return { userMessage, calls, reply };
  });
  return { id: trajectoryKeyOf(trajectory), system: trajectory.traj[0]?.content ?? '', turns };
}

/** The solved conversation of each τ-bench task id, in task order (tasks never solved are left out). */
export function loadAirlineEvalTasks(): EvalTask[] {
  const byTask = new Map<number, RecordedTrajectory>();
  for (const trajectory of loadAirlineTrajectories()) {
    if (trajectory.reward === 1 && !byTask.has(trajectory.task_id)) byTask.set(trajectory.task_id, trajectory);
  }
  return [...byTask.entries()].sort((a, b) => a[0] - b[0]).map(([, trajectory]) => evalTaskOf(trajectory));
}

/** The airline service as an {@link EvalService}: `fetch` over HTTP, answers mapped like `http-tools.ts`. */
async function startEvalService(retryAfterSeconds: number): Promise<EvalService> {
  const service = await startAirlineService({ faultHeader: true, era: 'recorded', faultProfile: { retryAfterSeconds, hangMaxMs: 30_000 }, unref: true });
  return {
    call: async (request) => {
      const response = await fetch(`${service.url}/tools/${request.toolName}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-run-id': request.databaseKey,
          'x-database-key': request.databaseKey,
          'idempotency-key': request.idempotencyKey,
          ...(request.fault === undefined ? {} : { 'x-inject-fault': request.fault }),
        },
        body: JSON.stringify(request.args),
        signal: request.signal,
      });
      if (!response.ok) throw await toolErrorFromResponse(response, Date.now());
      return ((await response.json()) as { result?: unknown }).result;
    },
    databaseDigest: (databaseKey) => {
      const database = service.database(databaseKey);
      if (database === undefined) return undefined;
      const changed = database.changedRecords();
      const records = {
        flights: changed.flights.map((id) => database.getFlight(id)),
        users: changed.users.map((id) => database.getUser(id)),
        reservations: changed.reservations.map((id) => database.getReservation(id)),
      };
      return createHash('sha256').update(canonicalJson({ changed, records })).digest('hex');
    },
    duplicatedWrites: () => service.mutations().reduce((sum, mutation) => sum + Math.max(0, mutation.applications - 1), 0),
    close: () => service.close(),
  };
}

/**
 * The workload (the `createEvalWorkload` export `toolrun eval --workload` looks for). Points
 * `TOOLRUN_DATA_DIR` at the data folder found, as `npm start` does.
 *
 * @throws Error with `locateTauBenchData`'s message (which files are missing, how to provide them)
 *   when the τ-bench data is absent and cannot be downloaded.
 */
export async function createEvalWorkload(options: { log?: (line: string) => void } = {}): Promise<EvalWorkload> {
  const location = await locateTauBenchData(options.log === undefined ? {} : { log: options.log });
  if (!location.ok) throw new Error(location.message);
  process.env.TOOLRUN_DATA_DIR = location.dataDir;
  const tools = [...loadAirlineToolSchemas().values()].map((schema) => ({ name: schema.name, description: schema.description, parameters: schema.parameters }));
  return {
    description: 'τ-bench airline: the first solved gpt-4o conversation of each task, against the local airline HTTP service',
    tasks: loadAirlineEvalTasks(),
    tools,
    writeTools: AIRLINE_WRITE_TOOLS,
    startService: ({ retryAfterSeconds }) => startEvalService(retryAfterSeconds),
  };
}
