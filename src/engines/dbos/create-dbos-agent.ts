import type { Model } from '../../agent/messages.ts';
import type { ModelPolicyOptions } from '../../agent/model-policy.ts';
import { runAgent, type AgentRunResult } from '../../agent/run-agent.ts';
import type { ToolRuntime, ToolRuntimeOptions } from '../../core/create-tool-runtime.ts';
import type { ToolsInput } from '../../core/tool-registry.ts';
import type { DeadLetterSink, MessageFailureEntry, ToolFailureEntry } from '../../ground/dead-letter-entries.ts';
import type { Stores } from '../../ground/ports/stores.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import type { SharedBreakerOptions } from '../../policies/shared-breaker.ts';
import { initialMessages, parseRunRequest } from '../../worker/parse-run-request.ts';
import { messageDeadLetterKey, pushDeadLetter } from '../../worker/push-dead-letter.ts';
import { resolveRuntime } from '../../worker/resolve-runtime.ts';
import { messageDeadLetterAdded, type WorkerEvent } from '../../worker/worker-events.ts';
import type { DbosEngine } from './dbos-api.ts';
import type { DbosAgent, DbosRunInput, DbosRunResult, DbosStartResult } from './dbos-run-types.ts';
import { commitRunEnd, deadLetterRun, type RunEndContext } from './dead-letter-run.ts';
import { durableModel } from './durable-model.ts';
import { durableRuntime } from './durable-runtime.ts';
import { DEAD_LETTER_STEP_NAME, FINISH_STEP_NAME, replayNumberOf } from './step-names.ts';

/** Options of {@link createDbosAgent}. */
export interface DbosAgentOptions {
  /** The `DBOS` class of `@dbos-inc/dbos-sdk` (the one your app launches). */
  dbos: DbosEngine;
  /** The workflow's registered name (one per agent of the app). @defaultValue `'toolrun.agent'` */
  name?: string;
  /** The model; each call of it (each attempt) is a DBOS step. */
  model: Model;
  /** Tools to build the runtime from, with a shared breaker on `stores.breakers`. */
  tools?: ToolsInput;
  /** A ready runtime instead of `tools` (its shared breaker is whatever it was built with). */
  runtime?: ToolRuntime;
  /** Options of the runtime built from `tools` (`callBudgetMs`: waits longer than it become durable DBOS sleeps). */
  runtimeOptions?: Omit<ToolRuntimeOptions, 'tools' | 'sharedBreaker'>;
  /** Options of the shared breaker on `stores.breakers` (every executor reads and writes it), or `false`. @defaultValue toolrun's */
  sharedBreaker?: Partial<SharedBreakerOptions> | false;
  /**
   * toolrun's stores: `createPostgresStores` on the database DBOS uses (or any other), so the
   * shared breaker, the journal (conversations, checkpoints) and both DLQs are the same for every
   * DBOS executor, the CLI and the dashboard.
   */
  stores: Stores;
  /** The DLQs. @defaultValue `stores.messageDlq` and `stores.toolDlq` */
  queues?: { messageDlq: DeadLetterSink<MessageFailureEntry>; toolDlq: DeadLetterSink<ToolFailureEntry> };
  /** Steps (model turns) a run may take. @defaultValue 20 */
  maxSteps?: number;
  /** Retries per tool per run. @defaultValue 2 */
  toolRetryBudget?: number;
  /** Retries, backoff and timeout of model calls (each attempt a step). @defaultValue toolrun's */
  modelPolicy?: ModelPolicyOptions;
  /** The model's name in dead-letter entries. @defaultValue `model.modelName`, the function's name, or `'model'` */
  modelName?: string;
  /**
   * How often DBOS recovers a workflow whose executor died before it gives up on it (status
   * `MAX_RECOVERY_ATTEMPTS_EXCEEDED`; {@link sweepDbosGaveUp} then dead-letters it). @defaultValue 5
   */
  maxRecoveryAttempts?: number;
  /** A body over this many UTF-8 bytes is rejected. @defaultValue 1_048_576 */
  maxBodyBytes?: number;
  /**
   * DBOS's retries of the steps that write toolrun's stores (the dead-letter step, a replay's last
   * commit) while the stores are out. @defaultValue 12 attempts, waits from 1 s growing ×1.5 (about 3 minutes)
   */
  storeStepRetry?: { maxAttempts?: number; intervalSeconds?: number; backoffRate?: number };
  /** Dead-letter and breaker events (`dead-letter-add`, `breaker-open`, …). */
  onEvent?: (event: WorkerEvent) => void;
}

/**
 * The steps that write toolrun's stores are retried by DBOS while the stores are out (12 attempts,
 * waits from 1 s growing ×1.5: about 3 minutes), so a short outage does not leave a run without its
 * entry. Every write in them is keyed or idempotent. A workflow that still fails ends `ERROR`:
 * `sweepDbosGaveUp` dead-letters it.
 */
const STORE_STEP = { retriesAllowed: true, intervalSeconds: 1, backoffRate: 1.5, maxAttempts: 12 } as const;

/** A replay's retry budget: every tool can spend its whole budget again at the failed step (the spent retries are at most `budget`). */
const replayBudget = (budget: number) => 2 * budget + 1;

/**
 * Registers toolrun's agent loop as a DBOS workflow (call it before `DBOS.launch()`). One run is
 * one workflow whose id is the run id; each model call and each tool call is a DBOS step
 * (`toolrun.model:<step>`, `toolrun.tool:<step>:<call>`), so a workflow DBOS recovers on another
 * executor reads the recorded answers and envelopes back and goes on from where it was.
 * toolrun's routing holds inside it: a failure the model can act on is the step's result; a run
 * whose in-band recovery is exhausted (or whose tool is broken for everyone: the shared breaker on
 * `stores.breakers` opens once, for every executor) ends `tool_failed` and its last step writes
 * the conversation to toolrun's journal and one resumable tool-DLQ entry pointing at the workflow
 * (`originalMessageId: 'dbos:<runId>'`). Replay it with {@link replayDbosRun} (DBOS's fork).
 *
 * @throws ToolrunError `INVALID_OPTIONS` without `dbos`, `model`, `stores`, or both of `tools` and `runtime` missing.
 */
export function createDbosAgent(options: DbosAgentOptions): DbosAgent {
  if (!options?.dbos || typeof options.model !== 'function' || !options.stores)
    throw new ToolrunError('INVALID_OPTIONS', 'createDbosAgent needs `dbos` (the DBOS class), `model` and `stores`');
  const { dbos, stores } = options;
  const name = options.name ?? 'toolrun.agent';
  const { runtime } = resolveRuntime(
    {
      runtime: options.runtime,
      tools: options.tools,
      runtimeOptions: options.runtimeOptions,
      sharedBreaker: options.sharedBreaker,
      onEvent: options.onEvent,
    },
    stores,
  );
  const clock = runtime.clock;
  const queues = options.queues ?? { messageDlq: stores.messageDlq, toolDlq: stores.toolDlq };
  const endContext: RunEndContext = { stores, queues, runtime, clock, onEvent: options.onEvent };
  const maxBodyBytes = options.maxBodyBytes ?? 1_048_576;
  const budget = options.toolRetryBudget ?? 2;
  const model = durableModel(dbos, options.model);
  const storeStep = { ...STORE_STEP, ...options.storeStepRetry, retriesAllowed: true };

  async function agentWorkflow(input: DbosRunInput): Promise<DbosRunResult> {
    const workflowId = dbos.workflowID ?? input.runId;
    const forked = (replayNumberOf(input.runId, workflowId) ?? 0) > 0;
    const parsed = parseRunRequest({ id: input.messageId, body: input.body }, Number.MAX_SAFE_INTEGER, '', runtime.redactor);
    if (!parsed.ok) throw new ToolrunError('INVALID_OPTIONS', `run ${input.runId}: its body is not a run request (${parsed.entry.reason.code})`);
    const run = await runAgent({
      model,
      runtime: durableRuntime({ engine: dbos, runtime, replayJournal: forked ? stores.journal : undefined, rebuildSessionBreaker: !forked }),
      messages: initialMessages(parsed.request),
      runId: input.runId,
      // a replay's session is its own: the calls refused in the failed run are made again
      sessionId: forked ? workflowId : (parsed.request.sessionId ?? input.runId),
      toolRetryBudget: forked ? replayBudget(budget) : budget,
      ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}),
      ...(options.modelPolicy ? { modelPolicy: options.modelPolicy } : {}),
      ...(options.modelName !== undefined ? { modelName: options.modelName } : {}),
    });
    const failed = run.status === 'tool_failed' || run.status === 'model_failed';
    const entry = failed ? await dbos.runStep(() => deadLetterRun(run, input.messageId, endContext), { name: DEAD_LETTER_STEP_NAME, ...storeStep }) : undefined;
    // a replay that got through: the journal says so (the dashboard, `toolrun dlq show`)
    if (!failed && forked) await dbos.runStep(() => commitRunEnd(run, input.messageId, endContext), { name: FINISH_STEP_NAME, ...storeStep });
    return summarise(run, workflowId, entry);
  }

  const workflow = dbos.registerWorkflow(agentWorkflow, { name, maxRecoveryAttempts: options.maxRecoveryAttempts ?? 5 });

  async function start(message: { id?: string; body: unknown }): Promise<DbosStartResult> {
    const messageId = typeof message?.id === 'string' ? message.id : undefined;
    const parsed = parseRunRequest(message as { id?: string; body: string }, maxBodyBytes, new Date(clock.now()).toISOString(), runtime.redactor);
    if (!parsed.ok) {
      const added = await pushDeadLetter(queues.messageDlq, messageId === undefined ? undefined : messageDeadLetterKey(messageId), parsed.entry);
      if (added) options.onEvent?.(messageDeadLetterAdded(parsed.entry, messageId, clock.now()));
      return { status: 'rejected', runId: null, messageId, entry: parsed.entry, added };
    }
    const runId = parsed.request.runId ?? (messageId !== undefined ? `run_${messageId}` : `run_${globalThis.crypto.randomUUID()}`);
    const input: DbosRunInput = { runId, messageId: messageId ?? '', body: message.body as string };
    const handle = await dbos.startWorkflow(workflow, { workflowID: runId })(input);
    return { status: 'started', runId, messageId, handle };
  }

  return {
    workflow,
    name,
    start,
    run: async (message) => {
      const started = await start(message);
      return started.status === 'started' ? started.handle.getResult() : undefined;
    },
  };
}

/** The workflow's result: the run without its conversation (kept in toolrun's journal when it matters). */
function summarise(run: AgentRunResult, workflowId: string, entry: DbosRunResult['entry']): DbosRunResult {
  const failure: DbosRunResult['failure'] = run.failure
    ? { kind: 'tool', stepIndex: run.failure.stepIndex, callIndex: run.failure.callIndex, name: run.failure.toolName, reason: run.failure.reason }
    : run.modelFailure
      ? { kind: 'model', stepIndex: run.modelFailure.stepIndex, name: run.modelFailure.modelName, reason: run.modelFailure.reason }
      : undefined;
  return {
    status: run.status,
    runId: run.runId,
    workflowId,
    text: run.text,
    steps: run.steps,
    modelCalls: run.modelCalls,
    tokensSpent: run.tokensSpent,
    conversationRef: run.conversationRef,
    ...(failure ? { failure } : {}),
    ...(entry ? { entry } : {}),
  };
}
