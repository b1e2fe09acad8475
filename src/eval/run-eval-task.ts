/**
 * One task in one arm: a minimal agent loop (the same for every arm) that calls the model, runs its
 * tool calls through the arm, puts the tool messages back, and opens the next customer turn after
 * each reply. Then it judges the task against the fault-free reference.
 */
import type { ChatMessage, Model, ModelToolCall } from '../agent/messages.ts';
import { initialMessages, type EvalTask } from './eval-task.ts';
import { callKey, type FaultKind, type TaskFaultPlan } from './fault-plan.ts';
import type { ArmExecutor } from './arm-executors.ts';
import type { TaskTools } from './task-tools.ts';

/** How a task run ended. */
export type EvalTaskStatus = 'completed' | 'max_model_calls' | 'host_ended_run' | 'model_failed';

/** One planned fault and what became of it. */
export interface FaultOutcome {
  kind: FaultKind;
  toolName: string;
  /** The fault happened (the model made the call it hits). */
  fired: boolean;
  /** The intended call it hit succeeded afterwards (never for `tool_gone`). */
  recovered: boolean;
}

/** The outcome of one task in one arm. */
export interface EvalTaskOutcome {
  taskId: string;
  status: EvalTaskStatus;
  /** Database equal to the reference, every intended call of an offered tool succeeded, run completed. */
  success: boolean;
  databaseMatches: boolean;
  modelCalls: number;
  toolCalls: number;
  /** Tool calls that failed (the model read a failure). */
  failedToolCalls: number;
  /** Requests that reached the service (in-band retries included). */
  serviceRequests: number;
  /** Input + output tokens of every model call. */
  tokens: number;
  faults: FaultOutcome[];
}

/** Options of {@link runEvalTask}. */
export interface RunEvalTaskOptions {
  task: EvalTask;
  plan: TaskFaultPlan;
  model: Model;
  tools: TaskTools;
  execute: ArmExecutor;
  /** Run key: the breaker's session and run id. */
  runKey: string;
  /** Model calls allowed per customer turn. */
  maxModelCallsPerTurn: number;
  /** Digest of the task's database after the run, and of the reference database. */
  databaseDigest: () => string | undefined;
  referenceDigest: string | undefined;
  signal: AbortSignal;
}

/** The model's calls with the plan's `bad_argument` faults applied to the first call each hits. */
function applyBadArguments(calls: ModelToolCall[], options: RunEvalTaskOptions, fired: boolean[]): ModelToolCall[] {
  return calls.map((call) => {
    const original = options.tools.originalName(call.name) ?? call.name;
    let args: unknown = call.args;
    try {
      if (typeof args === 'string') args = JSON.parse(args);
    } catch {
      return call;
    }
    const index = options.plan.faults.findIndex((fault, at) => {
      if (fault.kind !== 'bad_argument' || fired[at] || fault.badKey === undefined) return false;
      const intended = options.task.turns[fault.turn]?.calls[fault.call];
      return intended !== undefined && callKey(intended.name, intended.args) === callKey(original, args);
    });
    const fault = options.plan.faults[index];
    if (fault?.badKey === undefined) return call;
    fired[index] = true;
    const rewritten: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(args as Record<string, unknown>)) rewritten[key === fault.badKey.key ? fault.badKey.sentAs : key] = value;
    return { ...call, args: JSON.stringify(rewritten) };
  });
}

/** Marks the `tool_gone` / `renamed_tool` faults a call by a tool's original name hits. */
function markNameFaults(call: ModelToolCall, options: RunEvalTaskOptions, fired: boolean[]): void {
  if (options.tools.originalName(call.name) !== undefined) return;
  options.plan.faults.forEach((fault, index) => {
    if ((fault.kind === 'tool_gone' || fault.kind === 'renamed_tool') && fault.toolName === call.name) fired[index] = true;
  });
}

/**
 * Runs the task. The model gets the task's system prompt and first customer message; each text
 * answer closes a turn and the next customer message follows, until the last turn's answer.
 * `maxModelCallsPerTurn` model calls without an answer end the run (`max_model_calls`). A model
 * that throws ends it as `model_failed`. Never throws for a tool's failure.
 */
export async function runEvalTask(options: RunEvalTaskOptions): Promise<EvalTaskOutcome> {
  const { task, tools } = options;
  const messages: ChatMessage[] = initialMessages(task);
  const fired = options.plan.faults.map(() => false);
  let status: EvalTaskStatus = 'completed';
  let modelCalls = 0;
  let toolCalls = 0;
  let failedToolCalls = 0;
  let tokens = 0;
  let turn = 0;
  let callsThisTurn = 0;
  let step = 0;
  run: while (true) {
    if (callsThisTurn >= options.maxModelCallsPerTurn) {
      status = 'max_model_calls';
      break;
    }
    let response;
    try {
      response = await options.model({ messages, tools: tools.specs, signal: options.signal, stepIndex: step, runId: options.runKey });
    } catch {
      status = 'model_failed';
      break;
    }
    step += 1;
    modelCalls += 1;
    callsThisTurn += 1;
    tokens += response.usage.input + response.usage.output;
    const calls = applyBadArguments(response.toolCalls ?? [], options, fired);
    if (calls.length === 0) {
      messages.push({ role: 'assistant', content: response.text ?? '' });
      turn += 1;
      callsThisTurn = 0;
      const next = task.turns[turn];
      if (next === undefined) break;
      messages.push({ role: 'user', content: next.userMessage });
      continue;
    }
    messages.push({ role: 'assistant', content: response.text ?? null, toolCalls: calls });
    for (const call of calls) {
      markNameFaults(call, options, fired);
      toolCalls += 1;
      const outcome = await options.execute(call, options.runKey);
      if (!outcome.ok) failedToolCalls += 1;
      if (outcome.endsRun) {
        status = 'host_ended_run';
        break run;
      }
      messages.push({ role: 'tool', content: outcome.text, toolCallId: call.id, name: call.name });
    }
  }
  for (const index of tools.firedTransients) fired[index] = true;
  const faults: FaultOutcome[] = options.plan.faults.map((fault, index) => {
    const intended = task.turns[fault.turn]?.calls[fault.call];
    const recovered =
      fired[index] === true && fault.kind !== 'tool_gone' && intended !== undefined && tools.succeededKeys.has(callKey(intended.name, intended.args));
    return { kind: fault.kind, toolName: fault.toolName, fired: fired[index] === true, recovered };
  });
  const databaseMatches = options.databaseDigest() === options.referenceDigest;
  const everyCallDone = task.turns.every((taskTurn) =>
    taskTurn.calls.every((call) => options.plan.goneTools.has(call.name) || tools.succeededKeys.has(callKey(call.name, call.args))),
  );
  return {
    taskId: task.id,
    status,
    success: status === 'completed' && databaseMatches && everyCallDone,
    databaseMatches,
    modelCalls,
    toolCalls,
    failedToolCalls,
    serviceRequests: tools.serviceRequests(),
    tokens,
    faults,
  };
}
