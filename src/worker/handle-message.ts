import { randomUUID } from 'node:crypto';
import { runAgent, isTerminalRunStatus, type AgentRunHooks, type AgentRunResult, type AgentRunStatus } from '../agent/run-agent.ts';
import type { ChatMessage, Model } from '../agent/messages.ts';
import type { Clock } from '../core/ports/clock.ts';
import type { RunCheckpoint, Stores } from '../core/ports/stores.ts';
import type { ToolFailureInfo } from '../agent/run-state.ts';
import type { ToolCallRecord } from '../core/tool-call-record.ts';
import { createAjvSchemaValidator } from '../schema/ajv-schema-validator.ts';
import type { CompiledToolSchema } from '../core/ports/schema-validator.ts';
import { truncateText } from '../core/build-failure.ts';
import type { ToolRuntime, ToolRuntimeOptions } from '../core/create-tool-runtime.ts';
import type { ToolsInput } from '../core/tool-registry.ts';
import type { SharedBreakerOptions } from '../policies/shared-breaker.ts';
import type { DeadLetterSink, MessageFailureEntry, ToolFailureEntry } from './dead-letter-entries.ts';
import { RUN_REQUEST_SCHEMA, type RunRequest } from './message-schema.ts';
import { buildToolFailureEntry } from './build-tool-failure-entry.ts';
import { resolveRuntime } from './resolve-runtime.ts';
import { getDefaultStores } from './default-stores.ts';
import { isKeyedSink, messageDeadLetterKey, pushDeadLetter, toolDeadLetterKey } from './push-dead-letter.ts';
import type { WorkerEvent } from './worker-events.ts';

/** A queue message that asks for one agent run. */
export interface RunMessage {
  /** JSON text, validated against `RUN_REQUEST_SCHEMA`. */
  body: string;
  /** The queue's message id: a redelivered message with the same id resumes the same run. */
  id?: string;
}

/** Options of {@link handleMessage}. Durations in milliseconds. */
export interface HandleMessageOptions {
  model: Model;
  /** Tools to build the runtime from (cached per tools object and stores). */
  tools?: ToolsInput;
  /** A ready runtime (then the shared breaker is whatever it was built with). */
  runtime?: ToolRuntime;
  /** Options for the runtime built from `tools`. */
  runtimeOptions?: Omit<ToolRuntimeOptions, 'tools' | 'sharedBreaker'>;
  /**
   * The two dead-letter sinks: anything with `push`. Sinks with `pushOnce` (every
   * `DeadLetterQueue`) are pushed to by key — `message:<messageId>` (when the message has an id)
   * and `tool:<runId>:<stepIndex>` — so handling a message again adds no second entry.
   */
  queues: { messageDlq: DeadLetterSink<MessageFailureEntry>; toolDlq: DeadLetterSink<ToolFailureEntry> };
  /** Conversations, checkpoints, ledger, breaker state. @defaultValue a process-wide in-memory set */
  stores?: Stores;
  /** Retries per tool per run. @defaultValue 2 */
  toolRetryBudget?: number;
  /** @defaultValue 20 */
  maxSteps?: number;
  deadlineMs?: number;
  /** Cross-run breaker options (state in `stores.breakers`), or `false`. @defaultValue threshold 2, half-open after 30 s */
  sharedBreaker?: Partial<SharedBreakerOptions> | false;
  /** Alerts and dead-letter events. */
  onEvent?: (event: WorkerEvent) => void;
  onToolCall?: (record: ToolCallRecord, stepIndex: number) => void;
  /** Run-level observers passed to `runAgent` (e.g. `createObservability().runHooks` of `toolrun/otel`). */
  runHooks?: AgentRunHooks;
  /** Larger bodies go to the message DLQ. @defaultValue 1 MiB */
  maxBodyBytes?: number;
  signal?: AbortSignal;
  clock?: Clock;
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
    };

let requestSchema: CompiledToolSchema | undefined;

/** A text for a body that is not a string; never throws (`String()` does for a null-prototype object). */
function describeNonStringBody(body: unknown): string {
  try {
    return String(body);
  } catch {
    return Object.prototype.toString.call(body);
  }
}

function reject(message: RunMessage, code: string, detail: string, receivedAt: string, fields?: MessageFailureEntry['reason']['fields']): MessageFailureEntry {
  return {
    kind: 'message',
    rawBody: typeof message?.body === 'string' ? message.body : describeNonStringBody(message?.body),
    reason: { code, detail, ...(fields && fields.length > 0 ? { fields } : {}) },
    ...(typeof message?.id === 'string' ? { messageId: message.id } : {}),
    receivedAt,
  };
}

/** Parses and validates a body; a failure is a message-DLQ entry. */
function parseRunRequest(message: RunMessage, maxBodyBytes: number, receivedAt: string): { ok: true; request: RunRequest } | { ok: false; entry: MessageFailureEntry } {
  if (typeof message !== 'object' || message === null || typeof message.body !== 'string') {
    return { ok: false, entry: reject(message, 'INVALID_MESSAGE', 'The message has no string body', receivedAt) };
  }
  if (Buffer.byteLength(message.body) > maxBodyBytes) {
    return { ok: false, entry: reject(message, 'BODY_TOO_LARGE', `The body is over ${maxBodyBytes} bytes`, receivedAt) };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(message.body);
  } catch (error) {
    return { ok: false, entry: reject(message, 'MALFORMED_JSON', truncateText(`The body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`, 512), receivedAt) };
  }
  // Strict JSON Schema: a message comes from a program, not a model, so `null` is not read as "absent".
  const schema = (requestSchema ??= createAjvSchemaValidator({ nullAsAbsent: false }).compile(RUN_REQUEST_SCHEMA, { coerce: 'none' }));
  const validation = schema.validate(parsed);
  if (validation instanceof Promise) throw new Error('unreachable: JSON Schema validation is synchronous');
  if (!validation.ok) {
    return { ok: false, entry: reject(message, 'INVALID_MESSAGE', truncateText(validation.detail, 1024), receivedAt, validation.fields.map(({ path, problem, expected, received }) => ({ path, problem, ...(expected !== undefined ? { expected } : {}), ...(received !== undefined ? { received } : {}) }))) };
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
 * Handles one run-request message — the routing contract of SPEC.md §2:
 * - a body that cannot be parsed or validated → one message-DLQ entry, no retry, the model is never called (`rejected`);
 * - a transient tool failure that recovers → nothing dead-lettered (`completed`);
 * - in-band recovery exhausted, or a tool broken for everyone → one tool-DLQ entry with resumable state (`tool_failed`);
 * - a redelivered message (consumer crash) resumes its run from the last checkpoint; a finished run is not run again,
 *   and a message already dead-lettered is not dead-lettered twice (keyed push: see `queues`).
 *
 * Never throws for a bad message, a tool or the model; it throws only when a store fails (the
 * message must then be redelivered, not acknowledged).
 */
export async function handleMessage(message: RunMessage, options: HandleMessageOptions): Promise<HandleMessageResult> {
  const stores = options.stores ?? getDefaultStores();
  const runtime = resolveRuntime(options, stores);
  const clock = options.clock ?? runtime.clock;
  const receivedAt = new Date(clock.now()).toISOString();
  const parsed = parseRunRequest(message, options.maxBodyBytes ?? 1_048_576, receivedAt);
  const messageId = typeof message?.id === 'string' ? message.id : undefined;
  if (!parsed.ok) {
    const added = await pushDeadLetter(options.queues.messageDlq, messageId === undefined ? undefined : messageDeadLetterKey(messageId), parsed.entry);
    if (added) options.onEvent?.({ type: 'dead-letter-add', queue: 'message', reason: parsed.entry.reason.code, at: clock.now() });
    return { status: 'rejected', runId: null, messageId, reason: parsed.entry.reason, alreadyFinished: !added };
  }
  const request = parsed.request;
  const runId = request.runId ?? (messageId !== undefined ? `run_${messageId}` : `run_${randomUUID()}`);

  const existing = await stores.runs.get(runId);
  if (existing && isTerminalRunStatus(existing.status)) {
    // A crash after the run ended tool_failed but before the message was acknowledged: push the
    // entry now unless it was pushed, so it is never lost and never doubled.
    const pushed = existing.status === 'tool_failed' ? await ensureDeadLettered(existing, runtime, stores, options, clock) : undefined;
    return {
      status: existing.status as AgentRunStatus,
      runId,
      messageId,
      text: typeof existing.data?.text === 'string' ? existing.data.text : null,
      steps: existing.stepIndex,
      modelCalls: 0,
      tokensSpent: existing.tokensSpent,
      alreadyFinished: true,
      ...(pushed ? { toolFailure: pushed } : {}),
    };
  }

  const run: AgentRunResult = await runAgent({
    model: options.model,
    runtime,
    messages: initialMessages(request),
    runId,
    ...(request.sessionId !== undefined ? { sessionId: request.sessionId } : {}),
    ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}),
    ...(options.deadlineMs !== undefined ? { deadlineMs: options.deadlineMs } : {}),
    ...(options.toolRetryBudget !== undefined ? { toolRetryBudget: options.toolRetryBudget } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onToolCall ? { onToolCall: options.onToolCall } : {}),
    ...(options.runHooks ? { hooks: options.runHooks } : {}),
    persistence: { conversations: stores.conversations, runs: stores.runs, ledger: stores.ledger, messageId: messageId ?? '' },
  });

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
      firstSeenAt: new Date(clock.now()).toISOString(),
    });
    if (await pushToolDeadLetter(entry, stores, options)) {
      options.onEvent?.({ type: 'dead-letter-add', queue: 'tool', reason: entry.reason, toolName: entry.toolName, at: clock.now() });
      result.toolFailure = entry;
    }
  }
  return result;
}

/**
 * Pushes a tool-DLQ entry: by key when the sink has `pushOnce`; else with `push`, then a ledger
 * marker that a redelivery reads (it cannot cover a crash between the push and the marker).
 * Returns whether an entry was added.
 */
async function pushToolDeadLetter(entry: ToolFailureEntry, stores: Stores, options: HandleMessageOptions): Promise<boolean> {
  const sink = options.queues.toolDlq;
  const added = await pushDeadLetter(sink, toolDeadLetterKey(entry.runId, entry.stepIndex), entry);
  if (!isKeyedSink(sink)) await stores.ledger.putIfAbsent(deadLetterMarkerKey(entry.runId, entry.stepIndex), entry.firstSeenAt);
  return added;
}

/** Ledger key recording that a run's failure at a step was pushed to a `push`-only sink (or by a toolrun without keyed pushes). */
function deadLetterMarkerKey(runId: string, stepIndex: number): string {
  return `${runId}:dead-lettered:${stepIndex}`;
}

/**
 * Pushes the tool-DLQ entry of a `tool_failed` run unless it was pushed already: the ledger
 * marker (written for `push`-only sinks, and by earlier toolrun versions) or the sink's key says so.
 */
async function ensureDeadLettered(
  checkpoint: RunCheckpoint,
  runtime: ToolRuntime,
  stores: Stores,
  options: HandleMessageOptions,
  clock: Clock,
): Promise<ToolFailureEntry | undefined> {
  const failure = checkpoint.data?.failure as unknown as ToolFailureInfo | undefined;
  if (!failure || typeof failure !== 'object' || typeof failure.stepIndex !== 'number') return undefined;
  if ((await stores.ledger.get(deadLetterMarkerKey(checkpoint.runId, failure.stepIndex))) !== undefined) return undefined;
  const run = { runId: checkpoint.runId, conversationRef: checkpoint.conversationRef, tokensSpent: checkpoint.tokensSpent } as AgentRunResult;
  const entry = buildToolFailureEntry(run, failure, {
    messageId: checkpoint.messageId,
    redactor: runtime.redactor,
    sensitiveKeys: runtime.getTool(failure.toolName)?.definition.sensitive ?? [],
    firstSeenAt: new Date(clock.now()).toISOString(),
  });
  if (!(await pushToolDeadLetter(entry, stores, options))) return undefined;
  options.onEvent?.({ type: 'dead-letter-add', queue: 'tool', reason: entry.reason, toolName: entry.toolName, at: clock.now() });
  return entry;
}
