/**
 * The recovery A/B: the same tasks, faults and seed in every arm; only what the model reads after a
 * failure differs (and, in the third arm, toolrun's retries and breaker).
 */
import type { Model } from '../agent/messages.ts';
import { createArmExecutor, EVAL_ARMS, type EvalArm } from './arm-executors.ts';
import type { EvalService, EvalTask, EvalWorkload } from './eval-task.ts';
import { planTaskFaults, type PlannedFault, type TaskFaultPlan } from './fault-plan.ts';
import { runEvalTask, type EvalTaskOutcome } from './run-eval-task.ts';
import { SDK_DEFAULT_ERROR_TEXT_VERSIONS, type HostSdk } from './sdk-error-text.ts';
import { summariseArm, type ArmSummary } from './summarise-eval.ts';
import { createTaskTools } from './task-tools.ts';

/** Options of {@link runEval}. Durations in milliseconds. */
export interface RunEvalOptions {
  workload: EvalWorkload;
  /** The model of a task: the scripted model makes one per task, a real endpoint serves every task. */
  modelFor: (task: EvalTask) => Model;
  /** Name of the model, for the report (`scripted` or the endpoint's model name). */
  modelName: string;
  /** Seed of the fault plan and of the bootstrap. */
  seed: number;
  /** Tasks run, from the first. */
  taskCount: number;
  /** Whose default error text the first arm shows. */
  sdk: HostSdk;
  /** Planned faults per task. @defaultValue 2 */
  faultsPerTask?: number;
  /** Per-attempt timeout of a tool call (a `timeout` fault waits this long). @defaultValue 1000 */
  toolTimeoutMs?: number;
  /** `Retry-After` of an injected 429, in seconds. @defaultValue 1 */
  retryAfterSeconds?: number;
  /** Model calls allowed per customer turn (the longest recorded turn makes 11 calls). @defaultValue 20 */
  maxModelCallsPerTurn?: number;
  /** Arms run. @defaultValue all three */
  arms?: readonly EvalArm[];
  /** Progress lines. @defaultValue none */
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/** Everything an eval produced (the results JSON). */
export interface EvalResults {
  workload: string;
  model: string;
  sdk: { name: HostSdk; version: string };
  seed: number;
  settings: { faultsPerTask: number; toolTimeoutMs: number; retryAfterSeconds: number; maxModelCallsPerTurn: number };
  /** Task ids run (tasks whose intended calls all fail without faults are left out). */
  tasks: string[];
  plans: Array<{ taskId: string; faults: PlannedFault[] }>;
  arms: ArmSummary[];
  outcomes: Record<string, EvalTaskOutcome[]>;
}

/** The first arm's label: whose text it shows, with the version read. */
export function armLabel(arm: EvalArm, sdk: HostSdk): string {
  if (arm === 'sdk-default') return `${sdk} default error text (${SDK_DEFAULT_ERROR_TEXT_VERSIONS[sdk]})`;
  return arm === 'toolrun' ? "toolrun's envelope" : "toolrun's envelope + retries and breaker";
}

/**
 * The task with only the intended calls that succeed on a fresh database without faults (the
 * recorded conversations hold calls the service refuses), and the digest of the reference database.
 */
async function referenceRun(
  task: EvalTask,
  workload: EvalWorkload,
  service: EvalService,
  toolTimeoutMs: number,
): Promise<{ task: EvalTask; digest: string | undefined }> {
  const databaseKey = `reference:${task.id}`;
  const noFaults: TaskFaultPlan = { taskId: task.id, faults: [], goneTools: new Set(), renamedTools: new Map() };
  const tools = createTaskTools({ task, plan: noFaults, workload, service, databaseKey, toolTimeoutMs });
  const turns = [];
  for (const turn of task.turns) {
    const calls = [];
    for (const call of turn.calls) {
      try {
        await tools.invoke(call.name, call.args, AbortSignal.timeout(Math.max(toolTimeoutMs, 5_000)));
        calls.push(call);
      } catch {
        // refused without any fault: not an intended call of the eval
      }
    }
    turns.push({ ...turn, calls });
  }
  return { task: { ...task, turns }, digest: service.databaseDigest(databaseKey) };
}

/**
 * Runs every arm on the first `taskCount` tasks of the workload (those with at least one call that
 * succeeds without faults), each task on a fresh database per arm, against one service.
 *
 * @returns the results; never throws for a tool's or the model's failure (a model that throws ends
 *   its task as `model_failed`).
 */
export async function runEval(options: RunEvalOptions): Promise<EvalResults> {
  const faultsPerTask = options.faultsPerTask ?? 2;
  const toolTimeoutMs = options.toolTimeoutMs ?? 1_000;
  const retryAfterSeconds = options.retryAfterSeconds ?? 1;
  const maxModelCallsPerTurn = options.maxModelCallsPerTurn ?? 20;
  const arms = options.arms ?? EVAL_ARMS;
  const log = options.log ?? (() => {});
  const signal = options.signal ?? new AbortController().signal;
  const { workload } = options;
  const service = await workload.startService({ retryAfterSeconds });
  try {
    const references: Array<{ task: EvalTask; digest: string | undefined; plan: TaskFaultPlan }> = [];
    for (const candidate of workload.tasks) {
      if (references.length >= options.taskCount) break;
      const reference = await referenceRun(candidate, workload, service, toolTimeoutMs);
      if (reference.task.turns.every((turn) => turn.calls.length === 0)) continue;
      references.push({ ...reference, plan: planTaskFaults(reference.task, { seed: options.seed, faultsPerTask, writeTools: workload.writeTools }) });
    }
    log(`eval: ${references.length} tasks, ${arms.length} arms, seed ${options.seed}, model ${options.modelName}`);
    const summaries: ArmSummary[] = [];
    const outcomes: Record<string, EvalTaskOutcome[]> = {};
    for (const arm of arms) {
      const duplicatesBefore = service.duplicatedWrites();
      const armOutcomes: EvalTaskOutcome[] = [];
      for (const { task, digest, plan } of references) {
        signal.throwIfAborted();
        const databaseKey = `${arm}:${task.id}`;
        const tools = createTaskTools({ task, plan, workload, service, databaseKey, toolTimeoutMs });
        const outcome = await runEvalTask({
          task,
          plan,
          model: options.modelFor(task),
          tools,
          execute: createArmExecutor(arm, tools, options.sdk),
          runKey: `${arm}:${task.id}`,
          maxModelCallsPerTurn,
          databaseDigest: () => service.databaseDigest(databaseKey),
          referenceDigest: digest,
          signal,
        });
        armOutcomes.push(outcome);
        log(`  ${arm} ${task.id}: ${outcome.success ? 'solved' : 'not solved'} (${outcome.status}, ${outcome.failedToolCalls} failed calls)`);
      }
      outcomes[arm] = armOutcomes;
      summaries.push(
        summariseArm({
          arm,
          label: armLabel(arm, options.sdk),
          outcomes: armOutcomes,
          duplicatedWrites: service.duplicatedWrites() - duplicatesBefore,
          seed: options.seed,
        }),
      );
    }
    return {
      workload: workload.description,
      model: options.modelName,
      sdk: { name: options.sdk, version: SDK_DEFAULT_ERROR_TEXT_VERSIONS[options.sdk] },
      seed: options.seed,
      settings: { faultsPerTask, toolTimeoutMs, retryAfterSeconds, maxModelCallsPerTurn },
      tasks: references.map((reference) => reference.task.id),
      plans: references.map((reference) => ({ taskId: reference.task.id, faults: reference.plan.faults })),
      arms: summaries,
      outcomes,
    };
  } finally {
    await service.close();
  }
}
