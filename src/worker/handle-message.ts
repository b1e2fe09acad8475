import {
  runAgent,
  isTerminalRunStatus,
  type AgentRunHooks,
  type AgentRunResult,
  type AgentRunStatus,
  type CheckpointRetryOptions,
  type RunAgentOptions,
} from '../agent/run-agent.ts';
import type { ModelFailureInfo } from '../agent/model-policy.ts';
import type { ChatMessage, Model } from '../agent/messages.ts';
import type { Clock } from '../ground/ports/clock.ts';
import type { RunCheckpoint, Stores } from '../ground/ports/stores.ts';
import { decodeRunState } from '../agent/run-state.ts';

import { createAjvSchemaValidator } from '../schema/ajv-schema-validator.ts';
import type { CompiledToolSchema } from '../ground/ports/schema-validator.ts';
import { redactBounded } from '../core/build-failure.ts';
import { truncateUtf8, utf8ByteLength } from '../ground/utf8.ts';
import { redactFieldErrors } from '../core/redact-fields.ts';
import type { ToolRuntime } from '../core/create-tool-runtime.ts';
import type { ToolsInput } from '../core/tool-registry.ts';

import type { DeadLetterSink, MessageFailureEntry, ModelFailureEntry, ResumableEntry, RunFailureEntry, ToolFailureEntry } from './dead-letter-entries.ts';
import type { Redactor } from '../core/redact.ts';
import { claimRun, newClaimHolder, runClaimKey } from './run-claim.ts';
import { describeRunRequestFailure, RUN_REQUEST_SCHEMA, type RunRequest } from './message-schema.ts';
import { buildToolFailureEntry } from './build-tool-failure-entry.ts';
import { resolveRuntime } from './resolve-runtime.ts';
import { createMemoryStores } from '../stores/memory/index.ts';
import type { SharedBreaker } from '../policies/shared-breaker.ts';
import { isKeyedSink, messageDeadLetterKey, modelDeadLetterKey, pushDeadLetter, runDeadLetterKey, toolDeadLetterKey } from './push-dead-letter.ts';
import type { RunHooks, RunLimits, RunModelOptions, RunRuntimeOptions } from './run-options.ts';

/** A queue message that asks for one agent run. */
export interface RunMessage {
  /** JSON text, validated against `RUN_REQUEST_SCHEMA`. */
  body: string;
  /** The queue's message id: a redelivered message with the same id resumes the same run. */
  id?: string;
  /**
   * How many times the queue has delivered this message, this delivery included (1 the first
   * time). Past `maxDeliveries` the message is dead-lettered without running (a poison message:
   * every earlier delivery failed or crashed its consumer). @defaultValue 1
   */
  deliveries?: number;
}

/** Options of {@link handleMessage}. Durations in milliseconds. */
export interface HandleMessageOptions extends RunLimits, Pick<RunHooks, 'onEvent' | 'onToolCall'>, RunModelOptions, RunRuntimeOptions {
  model: Model;
  /** Tools to build the runtime from, for this call (a worker or `createToolrun` builds it once). */
  tools?: ToolsInput;
  /** A ready runtime (then the shared breaker is whatever it was built with). */
  runtime?: ToolRuntime;
  /**
   * The two dead-letter sinks: anything with `push`. Sinks with `pushOnce` (every
   * `DeadLetterQueue`) are pushed to by key — `message:<messageId>` (when the message has an id)
   * and `tool:<runId>:<stepIndex>` — so handling a message again adds no second entry.
   * @defaultValue `stores.messageDlq` and `stores.toolDlq`
   */
  queues?: { messageDlq: DeadLetterSink<MessageFailureEntry>; toolDlq: DeadLetterSink<ToolFailureEntry> };
  /**
   * Conversations, checkpoints, ledger, claims, breaker state. @defaultValue fresh in-memory stores
   * for this call only (nothing is shared between calls unless the caller passes the same `stores`)
   */
  stores?: Stores;
  /** Run-level observers passed to `runAgent` (e.g. `createObservability().runHooks` of `toolrun/otel`). */
  runHooks?: AgentRunHooks;
  /**
   * How long the claim on the run (`run:<runId>` in `stores.claims`) lasts without renewal; it is
   * renewed every third of it while the run goes on. A replay or drain of the same run meanwhile
   * finds it busy. @defaultValue 300_000
   */
  claimLeaseMs?: number;
  /**
   * The claim on the run is renewed only while this returns true (a queue consumer passes "my
   * lease still holds", so a consumer shut down mid-run lets the claim lapse with its lease).
   * @defaultValue always
   */
  holdClaimWhile?: () => boolean;
  /**
   * How a checkpoint write (a step commit, a tool call's ledger row) that fails because the store is
   * out (unreachable, busy, disk full, an I/O error) is sent again before the delivery fails (see `AgentPersistence.checkpointRetry`).
   * @defaultValue `DEFAULT_CHECKPOINT_RETRY`: 30 attempts, 100 ms doubling to 5 s (about 2 minutes)
   */
  checkpointRetry?: CheckpointRetryOptions;
  signal?: AbortSignal;
  clock?: Clock;
}

/** The options with the DLQs settled (`queues`, or the stores' own). */
type WithQueues<T extends HandleMessageOptions> = T & Required<Pick<HandleMessageOptions, 'queues'>>;

/** `options` with `queues` defaulting to the DLQs of `stores`. */
function withQueues<T extends HandleMessageOptions>(options: T, stores: Stores): WithQueues<T> {
  return options.queues !== undefined ? (options as WithQueues<T>) : { ...options, queues: { messageDlq: stores.messageDlq, toolDlq: stores.toolDlq } };
}

/** The outcome of handling one message. */
export type HandleMessageResult =
  | {
      status: 'rejected';
      runId: null;
      messageId: string | undefined;
      reason: MessageFailureEntry['reason'];
      /** An earlier delivery already dead-lettered the message (the keyed push added nothing). */
      alreadyFinished: boolean;
    }
  | {
      /** Past `maxDeliveries`: dead-lettered as a poison message, not run. */
      status: 'delivery_limit_exceeded';
      runId: string | null;
      messageId: string | undefined;
      /** Where the entry went: the tool DLQ (resumable from the checkpoint) or the message DLQ (the run had not started). */
      queue: 'message' | 'tool';
      deliveries: number;
      alreadyFinished: boolean;
    }
  | {
      /** Another consumer (a replay, a drain, a consumer whose lease was lost) holds the run's claim: nothing was done; deliver it again later. */
      status: 'busy';
      runId: string;
      messageId: string | undefined;
      holder: string | undefined;
      alreadyFinished: false;
    }
  | {
      status: AgentRunStatus;
      runId: string;
      messageId: string | undefined;
      text: string | null;
      steps: number;
      modelCalls: number;
      tokensSpent: { input: number; output: number };
      /** The run had already ended (a redelivery): nothing was done again. */
      alreadyFinished: boolean;
      /** The tool-DLQ entry this call added (`status` is `tool_failed`); absent when an earlier delivery had added it. */
      toolFailure?: ToolFailureEntry;
      /** The tool-DLQ entry this call added for a model failure (`status` is `model_failed`). */
      modelFailure?: ModelFailureEntry;
    };

/** The bound of the raw body kept in a message-DLQ entry of a body over `maxBodyBytes`. */
const MAX_REJECTED_BODY_BYTES = 65_536;
/** Field problems kept in a message-DLQ entry. */
const MAX_REJECTED_FIELDS = 20;

let requestSchema: CompiledToolSchema | undefined;

/** A text for a body that is not a string; never throws (`String()` does for a null-prototype object). */
function describeNonStringBody(body: unknown): string {
  try {
    return String(body);
  } catch {
    return Object.prototype.toString.call(body);
  }
}

function reject(
  message: RunMessage,
  code: MessageFailureEntry['reason']['code'],
  detail: string,
  receivedAt: string,
  redactor: Redactor,
  fields?: MessageFailureEntry['reason']['fields'],
  extra: { deliveries?: number } = {},
): MessageFailureEntry {
  const body = typeof message?.body === 'string' ? message.body : describeNonStringBody(message?.body);
  const cut = body.length > MAX_REJECTED_BODY_BYTES && utf8ByteLength(body) > MAX_REJECTED_BODY_BYTES;
  // each text cut, then redacted, then cut; a field at a sensitive key (`/password`) has its `received` masked whole
  const redacted = redactFieldErrors(redactor, (fields ?? []).slice(0, MAX_REJECTED_FIELDS), { maxBytes: 256 });
  const kept = redacted.fields.map((field) => ({
    path: redactBounded(redactor, field.path, 256),
    problem: field.problem,
    ...(field.expected !== undefined ? { expected: redactBounded(redactor, field.expected, 256) } : {}),
    ...(field.received !== undefined ? { received: redactBounded(redactor, field.received, 256) } : {}),
  }));
  return {
    kind: 'message',
    rawBody: cut ? truncateUtf8(body, MAX_REJECTED_BODY_BYTES) : body,
    rawBodyRedacted: false,
    ...(cut ? { rawBodyTruncated: true } : {}),
    reason: {
      code,
      detail: redacted.maskText(redactBounded(redactor, detail, 1024)),
      ...(kept.length > 0 ? { fields: kept } : {}),
      ...(extra.deliveries !== undefined ? { deliveries: extra.deliveries } : {}),
    },
    ...(typeof message?.id === 'string' ? { messageId: truncateUtf8(message.id, 512) } : {}),
    receivedAt,
  };
}

/** Parses and validates a body; a failure is a message-DLQ entry. */
function parseRunRequest(
  message: RunMessage,
  maxBodyBytes: number,
  receivedAt: string,
  redactor: Redactor,
): { ok: true; request: RunRequest } | { ok: false; entry: MessageFailureEntry } {
  if (typeof message !== 'object' || message === null || typeof message.body !== 'string') {
    return { ok: false, entry: reject(message, 'INVALID_MESSAGE', 'The message has no string body', receivedAt, redactor) };
  }
  if (message.body.length > maxBodyBytes / 3 && utf8ByteLength(message.body) > maxBodyBytes) {
    return { ok: false, entry: reject(message, 'BODY_TOO_LARGE', `The body is over ${maxBodyBytes} bytes`, receivedAt, redactor) };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(message.body);
  } catch (error) {
    return {
      ok: false,
      entry: reject(
        message,
        'MALFORMED_JSON',
        truncateUtf8(`The body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`, 512),
        receivedAt,
        redactor,
      ),
    };
  }
  // Strict JSON Schema: a message comes from a program, not a model, so `null` is not read as "absent".
  const schema = (requestSchema ??= createAjvSchemaValidator({ nullAsAbsent: false }).compile(RUN_REQUEST_SCHEMA, { coerce: 'none' }));
  const validation = schema.validate(parsed);
  if (validation instanceof Promise) throw new Error('unreachable: JSON Schema validation is synchronous');
  if (!validation.ok) {
    return {
      ok: false,
      entry: reject(
        message,
        'INVALID_MESSAGE',
        describeRunRequestFailure(parsed, validation),
        receivedAt,
        redactor,
        validation.fields.map(({ path, problem, expected, received }) => ({
          path,
          problem,
          ...(expected !== undefined ? { expected } : {}),
          ...(received !== undefined ? { received } : {}),
        })),
      ),
    };
  }
  return { ok: true, request: validation.value as RunRequest };
}

function initialMessages(request: RunRequest): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (request.system !== undefined) messages.push({ role: 'system', content: request.system });
  for (const message of request.messages ?? []) messages.push(message as ChatMessage);
  if (request.input !== undefined) messages.push({ role: 'user', content: request.input });
  return messages;
}

/**
 * Handles one run-request message — the routing contract:
 * - a body that cannot be parsed or validated → one message-DLQ entry, no retry, the model is never called (`rejected`);
 * - a transient tool failure that recovers → nothing dead-lettered (`completed`);
 * - in-band recovery exhausted, or a tool broken for everyone → one tool-DLQ entry with resumable state (`tool_failed`);
 * - the model failing past its policy (5xx, 429, timeouts, a rejected key, invalid answers) → one
 *   resumable tool-DLQ entry of kind `model` (`model_failed`); a rejected key opens the shared model breaker;
 * - a delivery past `maxDeliveries` (every earlier one failed or crashed) → dead-lettered as a poison
 *   message (`delivery_limit_exceeded`), resumable from its checkpoint when the run had started;
 * - a run claimed by another consumer (a replay or drain of it) → nothing done (`busy`): deliver it again later;
 * - a redelivered message (consumer crash) resumes its run from the last checkpoint; a finished run is not run again
 *   (`message-duplicate` event), and a message already dead-lettered is not dead-lettered twice (keyed push: see `queues`).
 *
 * Never throws for a bad message, a tool or the model; it throws only when a store fails or a bug
 * surfaces (the worker then redelivers the message, up to `maxDeliveries`).
 */
export async function handleMessage(message: RunMessage, given: HandleMessageOptions): Promise<HandleMessageResult> {
  const fallbackClock = given.clock ?? given.runtimeOptions?.clock ?? given.runtime?.clock;
  const stores = given.stores ?? createMemoryStores(fallbackClock ? { clock: fallbackClock } : {});
  const options = withQueues(given, stores);
  const { runtime, breaker } = resolveRuntime(options, stores);
  const clock = options.clock ?? runtime.clock;
  const now = () => new Date(clock.now()).toISOString();
  const receivedAt = now();
  const parsed = parseRunRequest(message, options.maxBodyBytes ?? 1_048_576, receivedAt, runtime.redactor);
  const messageId = typeof message?.id === 'string' ? message.id : undefined;
  if (!parsed.ok) return rejectMessage(parsed.entry, messageId, options, clock);
  const request = parsed.request;
  const runId = request.runId ?? (messageId !== undefined ? `run_${messageId}` : `run_${globalThis.crypto.randomUUID()}`);
  const deliveries = typeof message.deliveries === 'number' && Number.isFinite(message.deliveries) ? message.deliveries : 1;
  const maxDeliveries = options.maxDeliveries ?? 5;

  // The claim first, then the checkpoint, read once under it (the loop is handed what was read):
  // nothing can change the run between the read and the run. Both in one round trip where the
  // stores can (`ClaimStore.acquireWithCheckpoint`).
  const holder = newClaimHolder('worker');
  const claimed = await claimRun(stores.claims, runId, {
    holder,
    leaseMs: options.claimLeaseMs ?? 300_000,
    clock,
    holdWhile: options.holdClaimWhile,
    readCheckpoint: stores.runs,
  });
  if (!claimed.ok) {
    options.onEvent?.({ type: 'run-busy', runId, messageId, holder: claimed.holder, at: clock.now() });
    return { status: 'busy', runId, messageId, holder: claimed.holder, alreadyFinished: false };
  }
  let existing: RunCheckpoint | undefined;
  try {
    existing = claimed.checkpoint !== undefined ? (claimed.checkpoint ?? undefined) : await stores.runs.get(runId);
  } catch (error) {
    await claimed.claim.release();
    throw error;
  }
  if (existing && messageId !== undefined && existing.messageId !== '' && existing.messageId !== messageId) {
    await claimed.claim.release();
    // Another message's run: running this one would resume, or silently skip, a run it does not own.
    const entry = reject(
      message,
      'RUN_ID_CONFLICT',
      `runId "${runId}" belongs to the run of message "${existing.messageId}"; give this message its own runId`,
      receivedAt,
      runtime.redactor,
    );
    return rejectMessage(entry, messageId, options, clock);
  }
  if (existing && isTerminalRunStatus(existing.status)) {
    const finished = existing;
    try {
      options.onEvent?.({ type: 'message-duplicate', messageId, runId, runStatus: finished.status, at: clock.now() });
      // A crash after the run ended failed but before the message was acknowledged: push the
      // entry now unless it was pushed, so it is never lost and never doubled.
      const pushed =
        finished.status === 'tool_failed' || finished.status === 'model_failed'
          ? await ensureDeadLettered(finished, runtime, stores, options, clock)
          : undefined;
      return {
        status: finished.status as AgentRunStatus,
        runId,
        messageId,
        text: decodeRunState(finished.data).text ?? null,
        steps: finished.stepIndex,
        modelCalls: 0,
        tokensSpent: finished.tokensSpent,
        alreadyFinished: true,
        ...(pushed?.kind === 'tool' ? { toolFailure: pushed } : {}),
        ...(pushed?.kind === 'model' ? { modelFailure: pushed } : {}),
      };
    } finally {
      await claimed.claim.release();
    }
  }
  if (deliveries > maxDeliveries) {
    try {
      return await deadLetterPoisonMessage(message, {
        ...options,
        stores,
        lastError: await readDeliveryError(stores, messageId),
        deliveries: deliveries - 1,
        runId,
        checkpoint: existing ?? null,
      });
    } finally {
      await claimed.claim.release();
    }
  }

  let run: AgentRunResult;
  // the run's last commit releases the claim where the stores can: then it is only forgotten here
  let releasedByCommit = false;
  try {
    run = await runAgent({
      model: options.model,
      runtime,
      messages: initialMessages(request),
      runId,
      ...(request.sessionId !== undefined ? { sessionId: request.sessionId } : {}),
      ...(options.deadlineMs !== undefined ? { deadlineMs: options.deadlineMs } : {}),
      ...runOptionsOf(options, breaker),
      persistence: {
        conversations: stores.conversations,
        runs: stores.runs,
        ledger: stores.ledger,
        messageId: messageId ?? '',
        checkpoint: existing ?? null,
        ...(options.checkpointRetry !== undefined ? { checkpointRetry: options.checkpointRetry } : {}),
        ...(stores.claims !== undefined
          ? { claim: { claims: stores.claims, key: runClaimKey(runId), holder, onReleased: () => (releasedByCommit = true) } }
          : {}),
      },
    });
  } finally {
    await (releasedByCommit ? claimed.claim.forget() : claimed.claim.release());
  }

  const result: HandleMessageResult = {
    status: run.status,
    runId,
    messageId,
    text: run.text,
    steps: run.steps,
    modelCalls: run.modelCalls,
    tokensSpent: run.tokensSpent,
    alreadyFinished: false,
  };
  if (run.status === 'tool_failed' && run.failure) {
    const entry = buildToolFailureEntry(run, run.failure, {
      messageId: messageId ?? '',
      redactor: runtime.redactor,
      sensitiveKeys: runtime.getTool(run.failure.toolName)?.definition.sensitive ?? [],
      firstSeenAt: now(),
    });
    if (await pushResumable(entry, stores, options)) {
      options.onEvent?.({
        type: 'dead-letter-add',
        queue: 'tool',
        kind: 'tool',
        reason: entry.reason,
        lastError: entry.lastError.message,
        toolName: entry.toolName,
        runId,
        ...(messageId !== undefined ? { messageId } : {}),
        at: clock.now(),
      });
      result.toolFailure = entry;
    }
  } else if (run.status === 'model_failed' && run.modelFailure) {
    const entry = buildModelFailureEntry(run.runId, run.conversationRef, run.tokensSpent, run.modelFailure, messageId ?? '', now());
    if (await pushResumable(entry, stores, options)) {
      options.onEvent?.({
        type: 'dead-letter-add',
        queue: 'tool',
        kind: 'model',
        reason: entry.reason,
        lastError: entry.lastError.message,
        modelName: entry.modelName,
        runId,
        ...(messageId !== undefined ? { messageId } : {}),
        at: clock.now(),
      });
      result.modelFailure = entry;
    }
  }
  return result;
}

/**
 * The run options a message and a replay pass to `runAgent` alike (each only when set): limits,
 * cancellation, observers and the model's policy and breaker.
 */
export function runOptionsOf(
  options: Pick<HandleMessageOptions, 'maxSteps' | 'toolRetryBudget' | 'signal' | 'onToolCall' | 'runHooks' | 'modelPolicy' | 'modelName'>,
  breaker: SharedBreaker | undefined,
): Partial<RunAgentOptions> {
  return {
    ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}),
    ...(options.toolRetryBudget !== undefined ? { toolRetryBudget: options.toolRetryBudget } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onToolCall ? { onToolCall: options.onToolCall } : {}),
    ...(options.runHooks ? { hooks: options.runHooks } : {}),
    ...(options.modelPolicy ? { modelPolicy: options.modelPolicy } : {}),
    ...(options.modelName !== undefined ? { modelName: options.modelName } : {}),
    ...(breaker ? { modelBreaker: breaker } : {}),
  };
}

async function rejectMessage(
  entry: MessageFailureEntry,
  messageId: string | undefined,
  options: WithQueues<HandleMessageOptions>,
  clock: Clock,
): Promise<HandleMessageResult> {
  const added = await pushDeadLetter(options.queues.messageDlq, messageId === undefined ? undefined : messageDeadLetterKey(messageId), entry);
  if (added)
    options.onEvent?.({
      type: 'dead-letter-add',
      queue: 'message',
      kind: 'message',
      reason: entry.reason.code,
      lastError: entry.reason.detail,
      ...(messageId !== undefined ? { messageId } : {}),
      at: clock.now(),
    });
  return { status: 'rejected', runId: null, messageId, reason: entry.reason, alreadyFinished: !added };
}

/** Builds the resumable tool-DLQ entry of a run whose model failed. */
export function buildModelFailureEntry(
  runId: string,
  conversationRef: string,
  tokensSpent: { input: number; output: number },
  failure: ModelFailureInfo,
  messageId: string,
  firstSeenAt: string,
): ModelFailureEntry {
  return {
    kind: 'model',
    runId,
    stepIndex: failure.stepIndex,
    modelName: failure.modelName,
    attempts: failure.attempts,
    lastError: { kind: failure.lastError.kind, status: failure.lastError.status, message: failure.lastError.message, code: failure.lastError.code },
    conversationRef,
    tokensSpent: { ...tokensSpent },
    firstSeenAt,
    originalMessageId: messageId,
    reason: failure.reason,
    ...(failure.retryAfterMs !== undefined ? { retryAfterMs: failure.retryAfterMs } : {}),
  };
}

/** The `pushOnce` key of a resumable entry: per kind, run and step. */
export function resumableDeadLetterKey(entry: ResumableEntry): string {
  switch (entry.kind) {
    case 'tool':
      return toolDeadLetterKey(entry.runId, entry.stepIndex);
    case 'model':
      return modelDeadLetterKey(entry.runId, entry.stepIndex);
    case 'run':
      return runDeadLetterKey(entry.runId, entry.stepIndex);
  }
}

/**
 * Pushes a resumable entry: by key when the sink has `pushOnce`; else with `push`, then a ledger
 * marker that a redelivery reads (it cannot cover a crash between the push and the marker).
 * Returns whether an entry was added.
 */
async function pushResumable(entry: ResumableEntry, stores: Stores, options: Required<Pick<HandleMessageOptions, 'queues'>>): Promise<boolean> {
  const sink = options.queues.toolDlq as DeadLetterSink<ResumableEntry>;
  const added = await pushDeadLetter(sink, resumableDeadLetterKey(entry), entry);
  if (!isKeyedSink(sink)) await stores.ledger.putIfAbsent(deadLetterMarkerKey(entry.runId, entry.stepIndex, entry.kind), entry.firstSeenAt);
  return added;
}

/** Ledger key recording that a run's failure at a step was pushed to a `push`-only sink (or by a toolrun without keyed pushes). */
function deadLetterMarkerKey(runId: string, stepIndex: number, kind: ResumableEntry['kind'] = 'tool'): string {
  return kind === 'tool' ? `${runId}:dead-lettered:${stepIndex}` : `${runId}:dead-lettered:${kind}:${stepIndex}`;
}

/** The ledger key of the last failure of a message's deliveries. */
function deliveryErrorKey(messageId: string): string {
  return `message:${messageId}:last-delivery-error`;
}

/** A thrown value as a bounded, redacted line (never throws). */
function describeThrown(error: unknown, redactor: Redactor): string {
  let text: string;
  try {
    text = error instanceof Error ? `${error.name}: ${error.message}` : typeof error === 'string' ? error : (JSON.stringify(error) ?? String(error));
  } catch {
    text = Object.prototype.toString.call(error);
  }
  return redactBounded(redactor, text, 1024);
}

/**
 * Records why a delivery of `messageId` failed (in the idempotency ledger), so the entry of a
 * message that reaches the delivery bound after a crash still says what went wrong last. Never throws.
 */
export async function recordDeliveryError(stores: Stores, messageId: string, error: unknown, redactor: Redactor): Promise<void> {
  try {
    const key = deliveryErrorKey(messageId);
    const text = describeThrown(error, redactor);
    // the same failure again (a poison message fails alike at every delivery) leaves the record as
    // it is: replacing it is a delete and a put, and a crash between the two would lose it
    const first = await stores.ledger.putIfAbsent(key, text);
    if (first.stored || first.value === text) return;
    await stores.ledger.delete(key);
    await stores.ledger.putIfAbsent(key, text);
  } catch {
    // the store that failed the delivery may fail this too: the entry then says the cause is unknown
  }
}

async function readDeliveryError(stores: Stores, messageId: string | undefined): Promise<string | undefined> {
  if (messageId === undefined) return undefined;
  const value = await stores.ledger.get(deliveryErrorKey(messageId)).catch(() => undefined);
  return typeof value === 'string' ? value : undefined;
}

/** The run id a message's body names, or the one its id gives (`run_<id>`); undefined when neither can be read. */
function runIdOf(message: RunMessage): string | undefined {
  let runId: unknown;
  try {
    runId = typeof message?.body === 'string' && message.body.length <= 1_048_576 ? (JSON.parse(message.body) as { runId?: unknown })?.runId : undefined;
  } catch {
    runId = undefined;
  }
  if (typeof runId === 'string' && runId.length > 0) return runId;
  return typeof message?.id === 'string' ? `run_${message.id}` : undefined;
}

/** Options of {@link deadLetterPoisonMessage}. */
export interface PoisonMessageOptions extends HandleMessageOptions {
  stores: Stores;
  /** The last failure (a thrown value, or its recorded text); absent after crashes that left no word. */
  lastError: unknown;
  /** Deliveries that failed. */
  deliveries: number;
  /** The run id, when the body could be read. */
  runId?: string;
  /** The run's checkpoint as just read (`null`: none), so it is not read again. @defaultValue read from `stores.runs` */
  checkpoint?: RunCheckpoint | null;
}

/**
 * Dead-letters a message whose deliveries all failed (a poison message): when its run had started,
 * a resumable tool-DLQ entry of kind `run` (the run resumes from its last checkpoint on replay);
 * otherwise a message-DLQ entry `DELIVERY_LIMIT_EXCEEDED` with the raw body. Keyed, so a repeat adds
 * nothing. Raises `delivery-limit-exceeded` and `dead-letter-add`. Throws only when the DLQ does.
 */
export async function deadLetterPoisonMessage(message: RunMessage, given: PoisonMessageOptions): Promise<HandleMessageResult> {
  const options = withQueues(given, given.stores);
  const { stores } = options;
  const { runtime } = resolveRuntime(options, stores);
  const clock = options.clock ?? runtime.clock;
  const messageId = typeof message?.id === 'string' ? message.id : undefined;
  const error =
    options.lastError === undefined
      ? 'every delivery ended without a result (the consumer crashed, hung past its lease, or the store failed)'
      : typeof options.lastError === 'string'
        ? options.lastError
        : describeThrown(options.lastError, runtime.redactor);
  const runId = options.runId ?? runIdOf(message);
  const checkpoint =
    options.checkpoint !== undefined && options.runId !== undefined
      ? (options.checkpoint ?? undefined)
      : runId !== undefined
        ? await stores.runs.get(runId)
        : undefined;
  if (checkpoint) {
    const entry: RunFailureEntry = {
      kind: 'run',
      runId: checkpoint.runId,
      stepIndex: checkpoint.stepIndex,
      deliveries: options.deliveries,
      lastError: { kind: options.lastError === undefined ? 'crash' : 'exception', status: null, message: redactBounded(runtime.redactor, error, 1024) },
      conversationRef: checkpoint.conversationRef,
      tokensSpent: { ...checkpoint.tokensSpent },
      firstSeenAt: new Date(clock.now()).toISOString(),
      originalMessageId: messageId ?? checkpoint.messageId,
      reason: 'delivery-limit-exceeded',
    };
    const added = await pushResumable(entry, stores, options);
    if (added) {
      options.onEvent?.({
        type: 'delivery-limit-exceeded',
        messageId: messageId ?? '',
        runId: checkpoint.runId,
        deliveries: options.deliveries,
        queue: 'tool',
        error: entry.lastError.message,
        at: clock.now(),
      });
      options.onEvent?.({
        type: 'dead-letter-add',
        queue: 'tool',
        kind: 'run',
        reason: entry.reason,
        lastError: entry.lastError.message,
        runId: checkpoint.runId,
        ...(messageId !== undefined ? { messageId } : {}),
        at: clock.now(),
      });
    }
    return { status: 'delivery_limit_exceeded', runId: checkpoint.runId, messageId, queue: 'tool', deliveries: options.deliveries, alreadyFinished: !added };
  }
  const entry = reject(
    message,
    'DELIVERY_LIMIT_EXCEEDED',
    `${options.deliveries} deliveries failed; the last: ${error}`,
    new Date(clock.now()).toISOString(),
    runtime.redactor,
    undefined,
    { deliveries: options.deliveries },
  );
  const added = await pushDeadLetter(options.queues.messageDlq, messageId === undefined ? undefined : messageDeadLetterKey(messageId), entry);
  if (added) {
    options.onEvent?.({
      type: 'delivery-limit-exceeded',
      messageId: messageId ?? '',
      runId: null,
      deliveries: options.deliveries,
      queue: 'message',
      error: entry.reason.detail,
      at: clock.now(),
    });
    options.onEvent?.({
      type: 'dead-letter-add',
      queue: 'message',
      kind: 'message',
      reason: entry.reason.code,
      lastError: entry.reason.detail,
      ...(messageId !== undefined ? { messageId } : {}),
      at: clock.now(),
    });
  }
  return { status: 'delivery_limit_exceeded', runId: null, messageId, queue: 'message', deliveries: options.deliveries, alreadyFinished: !added };
}

/**
 * Pushes the resumable entry of a `tool_failed` or `model_failed` run unless it was pushed already:
 * the ledger marker (written for `push`-only sinks, and by earlier toolrun versions) or the sink's key says so.
 */
async function ensureDeadLettered(
  checkpoint: RunCheckpoint,
  runtime: ToolRuntime,
  stores: Stores,
  options: WithQueues<HandleMessageOptions>,
  clock: Clock,
): Promise<ToolFailureEntry | ModelFailureEntry | undefined> {
  const firstSeenAt = new Date(clock.now()).toISOString();
  let entry: ToolFailureEntry | ModelFailureEntry;
  if (checkpoint.status === 'model_failed') {
    const failure = decodeRunState(checkpoint.data).modelFailure;
    if (!failure) return undefined;
    if ((await stores.ledger.get(deadLetterMarkerKey(checkpoint.runId, failure.stepIndex, 'model'))) !== undefined) return undefined;
    entry = buildModelFailureEntry(checkpoint.runId, checkpoint.conversationRef, checkpoint.tokensSpent, failure, checkpoint.messageId, firstSeenAt);
  } else {
    const failure = decodeRunState(checkpoint.data).failure;
    if (!failure) return undefined;
    if ((await stores.ledger.get(deadLetterMarkerKey(checkpoint.runId, failure.stepIndex))) !== undefined) return undefined;
    const run = { runId: checkpoint.runId, conversationRef: checkpoint.conversationRef, tokensSpent: checkpoint.tokensSpent } as AgentRunResult;
    entry = buildToolFailureEntry(run, failure, {
      messageId: checkpoint.messageId,
      redactor: runtime.redactor,
      sensitiveKeys: runtime.getTool(failure.toolName)?.definition.sensitive ?? [],
      firstSeenAt,
    });
  }
  if (!(await pushResumable(entry, stores, options))) return undefined;
  options.onEvent?.({
    type: 'dead-letter-add',
    queue: 'tool',
    kind: entry.kind,
    reason: entry.reason,
    lastError: entry.lastError.message,
    ...(entry.kind === 'tool' ? { toolName: entry.toolName } : { modelName: entry.modelName }),
    runId: entry.runId,
    ...(checkpoint.messageId !== '' ? { messageId: checkpoint.messageId } : {}),
    at: clock.now(),
  });
  return entry;
}
