/**
 * The rows of the dashboard's lists and the detail of one entry: the conversation behind a tool-DLQ
 * entry up to the failed call, the envelope the model saw, the developer record joined by
 * `trace_id`, the ledger of calls already applied, the tool's breaker.
 */
import type { ChatMessage } from '../agent/messages.ts';
import { ledgerKey } from '../ground/ports/run-journal.ts';
import type { DeadLetterRecord, Stores } from '../ground/ports/stores.ts';
import type { ToolFailureLogRecord } from '../ground/ports/failure-log.ts';
import { FAILURE_CODES, type FailureType } from '../ground/failure-codes.ts';
import { DEFAULT_CONVERSATION_TTL_MS } from '../stores/default-conversation-ttl.ts';
import { toolDeadLetterKind, type ToolDeadLetterKind } from '../worker/dead-letter-metrics.ts';
import { hostOfEntry, hostReplayPlanText } from '../worker/host-entry.ts';
import { asMessageEntry, asToolEntry, messageGroupOf, subjectOf, toolCauseOf, toolGroupOf } from './dashboard-entries.ts';
import type { ConversationExpiryLookup, LedgerLookup } from './dashboard-source.ts';
import { readBreakers, type BreakerView } from './dashboard-overview.ts';
import { estimateReplay, type ReplayEstimate } from './dashboard-jobs.ts';

/** What the rows and details are read with. */
export interface DetailContext {
  stores: Stores;
  nowMs: number;
  maxSteps: number;
  conversationExpiry?: ConversationExpiryLookup | undefined;
  conversationTtlMs?: number | undefined;
  /** The developer record of a trace id (the failure log), when there is a log. */
  developerRecord?: ((traceId: string) => Promise<ToolFailureLogRecord | undefined>) | undefined;
  /** Reads many ledger keys at once (see `backendLedgerLookup`); without it each key is one `ledger.get`. */
  ledgerValues?: LedgerLookup | undefined;
}

/** One row of the tool-DLQ list. */
export interface ToolEntryRow {
  id: string;
  kind: ToolDeadLetterKind;
  runId: string | null;
  /** The failed step, 0-based, and the run's step bound. */
  step: { index: number | null; of: number };
  tool: string;
  cause: string;
  group: string;
  /** The failed envelope's `error.type` and `error.code` (tool failures, from the ledger); the last error's kind otherwise. */
  type: string | null;
  code: string | null;
  attempts: number | null;
  deliveries: number | null;
  firstSeenAt: string;
  ageMs: number;
  tokens: { input: number; output: number };
  /** ms until the conversation expires (negative: expired); `null` when unknown. */
  expiresInMs: number | null;
  /** `stored`: the backend's expiry; `estimated`: the checkpoint's `updatedAt` + the TTL; `gone`: no conversation. */
  expiry: 'stored' | 'estimated' | 'gone' | 'unknown';
  lastError: string;
}

/** One row of the message-DLQ list. */
export interface MessageEntryRow {
  id: string;
  group: string;
  code: string;
  messageId: string | null;
  receivedAt: string;
  ageMs: number;
  detail: string;
  /** The first 120 characters of the raw body (redacted with everything else before it leaves the server). */
  bodyPreview: string;
}

const FAILED_CALL_PROBES = 4;

interface EnvelopeLike {
  status?: string;
  tool_name?: string;
  trace_id?: string;
  call_id?: string;
  error?: { type?: string; code?: string; message?: string };
}

/**
 * The failure type of a last error that has no recorded envelope (the run stopped before the model
 * saw one): its code when it is a failure code, else its kind, as the runtime classifies that kind.
 */
const TYPE_OF_KIND: Readonly<Record<string, FailureType>> = {
  server: 'environment',
  timeout: 'environment',
  network: 'environment',
  rate_limit: 'environment',
  misconfigured: 'environment',
  auth: 'permission',
  forbidden: 'permission',
  not_found: 'logic',
  precondition: 'logic',
  invalid_input: 'invalid_parameter',
};

function typeOfLastError(lastError: { kind?: unknown; code?: unknown } | undefined): FailureType | null {
  const code = typeof lastError?.code === 'string' ? lastError.code : undefined;
  if (code !== undefined && Object.hasOwn(FAILURE_CODES, code)) return FAILURE_CODES[code as keyof typeof FAILURE_CODES].type;
  return typeof lastError?.kind === 'string' ? (TYPE_OF_KIND[lastError.kind] ?? null) : null;
}

/** Reads one ledger key. */
type LedgerRead = (key: string) => Promise<unknown>;

/** The outcomes recorded for a step (call indexes 0–3). */
async function stepOutcomes(read: LedgerRead, runId: string, stepIndex: number): Promise<Array<{ callIndex: number; envelope: EnvelopeLike | undefined }>> {
  return Promise.all(
    Array.from({ length: FAILED_CALL_PROBES }, async (_, callIndex) => ({
      callIndex,
      envelope: (await read(ledgerKey(runId, stepIndex, callIndex))) as EnvelopeLike | undefined,
    })),
  );
}

/** The ledger keys {@link lastFailedEnvelope} reads for a failed step. */
function failedEnvelopeKeys(runId: string, stepIndex: number): string[] {
  return [stepIndex, stepIndex - 1]
    .filter((step) => step >= 0)
    .flatMap((step) => Array.from({ length: FAILED_CALL_PROBES }, (_, callIndex) => ledgerKey(runId, step, callIndex)));
}

/**
 * The failed envelope of `toolName` the model last saw: recorded at the failed step, or — when the
 * run stopped before running the call again (its retry budget was spent) — at the step before.
 */
async function lastFailedEnvelope(read: LedgerRead, runId: string, stepIndex: number, toolName: string | undefined): Promise<EnvelopeLike | undefined> {
  for (const step of [stepIndex, stepIndex - 1]) {
    if (step < 0) continue;
    const outcomes = await stepOutcomes(read, runId, step);
    const failed =
      outcomes.find((outcome) => outcome.envelope?.status === 'failed' && outcome.envelope.tool_name === toolName) ??
      (toolName === undefined ? outcomes.find((outcome) => outcome.envelope?.status === 'failed') : undefined);
    if (failed?.envelope) return failed.envelope;
  }
  return undefined;
}

function timeOf(text: unknown, fallback: string): number {
  const ms = typeof text === 'string' ? Date.parse(text) : Number.NaN;
  return Number.isFinite(ms) ? ms : Date.parse(fallback);
}

function errorText(entry: ReturnType<typeof asToolEntry>): string {
  const error = entry.lastError;
  if (!error) return '';
  return `${error.kind ?? '?'}${error.status !== null && error.status !== undefined ? ` ${error.status}` : ''}: ${String(error.message ?? '')}`.slice(0, 300);
}

/** The rows of a page of tool-DLQ records: one ledger probe of the failed step, one checkpoint read and one expiry lookup per page. */
export async function toolEntryRows(records: readonly DeadLetterRecord<unknown>[], context: DetailContext): Promise<ToolEntryRow[]> {
  const refs = records.map((record) => asToolEntry(record.entry).conversationRef).filter((ref): ref is string => typeof ref === 'string');
  const probed = records.flatMap((record) => {
    const entry = asToolEntry(record.entry);
    return toolDeadLetterKind(record.entry) === 'tool' && typeof entry.runId === 'string' && Number.isInteger(entry.stepIndex)
      ? failedEnvelopeKeys(entry.runId, entry.stepIndex as number)
      : [];
  });
  const [expiries, ledgerValues] = await Promise.all([
    context.conversationExpiry ? context.conversationExpiry(refs) : undefined,
    context.ledgerValues && probed.length > 0 ? context.ledgerValues(probed) : undefined,
  ]);
  const read: LedgerRead = ledgerValues ? async (key) => ledgerValues.get(key) : (key) => context.stores.ledger.get(key);
  return Promise.all(
    records.map(async (record): Promise<ToolEntryRow> => {
      const entry = asToolEntry(record.entry);
      const kind = toolDeadLetterKind(record.entry);
      const step = Number.isInteger(entry.stepIndex) ? (entry.stepIndex as number) : null;
      let type: string | null = null;
      let code: string | null = null;
      if (kind === 'tool' && typeof entry.runId === 'string' && step !== null) {
        const failed = await lastFailedEnvelope(read, entry.runId, step, entry.toolName);
        type = failed?.error?.type ?? null;
        code = failed?.error?.code ?? null;
      }
      if (type === null) {
        type = kind === 'model' ? 'model' : kind === 'run' ? 'run' : typeOfLastError(entry.lastError);
        code = entry.lastError?.code ?? entry.lastError?.kind ?? null;
      }
      let expiresInMs: number | null = null;
      let expiry: ToolEntryRow['expiry'] = 'unknown';
      if (typeof entry.conversationRef === 'string') {
        if (expiries) {
          const at = expiries.get(entry.conversationRef);
          expiry = at === undefined ? 'gone' : 'stored';
          expiresInMs = at === undefined ? null : at - context.nowMs;
        } else if (typeof entry.runId === 'string') {
          const checkpoint = await context.stores.runs.get(entry.runId);
          const updated = checkpoint ? Date.parse(checkpoint.updatedAt) : Number.NaN;
          if (Number.isFinite(updated)) {
            expiry = 'estimated';
            expiresInMs = updated + (context.conversationTtlMs ?? DEFAULT_CONVERSATION_TTL_MS) - context.nowMs;
          }
        }
      }
      const firstSeenMs = timeOf(entry.firstSeenAt, record.addedAt);
      return {
        id: record.id,
        kind,
        runId: typeof entry.runId === 'string' ? entry.runId : null,
        step: { index: step, of: context.maxSteps },
        tool: subjectOf(record.entry),
        cause: toolCauseOf(record.entry),
        group: toolGroupOf(record.entry),
        type,
        code,
        attempts: typeof entry.attempts === 'number' ? entry.attempts : null,
        deliveries: typeof entry.deliveries === 'number' ? entry.deliveries : null,
        firstSeenAt: new Date(firstSeenMs).toISOString(),
        ageMs: Math.max(0, context.nowMs - firstSeenMs),
        tokens: { input: Number(entry.tokensSpent?.input ?? 0) || 0, output: Number(entry.tokensSpent?.output ?? 0) || 0 },
        expiresInMs,
        expiry,
        lastError: errorText(entry),
      };
    }),
  );
}

/** The rows of a page of message-DLQ records. */
export function messageEntryRows(records: readonly DeadLetterRecord<unknown>[], nowMs: number): MessageEntryRow[] {
  return records.map((record) => {
    const message = asMessageEntry(record.entry);
    const receivedMs = timeOf(message.receivedAt, record.addedAt);
    return {
      id: record.id,
      group: messageGroupOf(record.entry),
      code: String(message.reason?.code ?? 'unknown'),
      messageId: typeof message.messageId === 'string' ? message.messageId : null,
      receivedAt: new Date(receivedMs).toISOString(),
      ageMs: Math.max(0, nowMs - receivedMs),
      detail: String(message.reason?.detail ?? '').slice(0, 300),
      bodyPreview: String(message.rawBody ?? '').slice(0, 120),
    };
  });
}

/** One message of the conversation as the detail shows it. */
export interface ConversationMessageView {
  index: number;
  role: string;
  content: string | null;
  toolCalls?: Array<{ id: string; name: string; args: unknown; highlighted: boolean }>;
  toolCallId?: string;
  name?: string;
  /** The run's step of an assistant message and of the tool results that answer it (`null`: history before the run). */
  step: number | null;
  /** The failed call, or the result of it. */
  highlighted: boolean;
}

/** One call of the run as the ledger recorded it. */
export interface LedgerCallView {
  key: string;
  step: number;
  callIndex: number;
  toolName: string;
  /** `applied`: a success is recorded (a replay will not run it again); `failed`: a failure is recorded (a replay re-executes it); `not-recorded`: no outcome (a replay runs it). */
  outcome: 'applied' | 'failed' | 'not-recorded';
  traceId: string | null;
}

/** The detail of one tool-DLQ entry. */
export interface ToolEntryDetail {
  id: string;
  addedAt: string;
  kind: ToolDeadLetterKind;
  row: ToolEntryRow;
  /** The entry as stored (its arguments were redacted when it was written; everything is redacted again on the way out). */
  entry: unknown;
  replayPlan: string;
  /** What a replay of this entry costs: model calls and input tokens at least, and what the run spent so far. */
  estimate: ReplayEstimate;
  checkpoint: { status: string; stepIndex: number; updatedAt: string; tokensSpent: { input: number; output: number } } | null;
  conversation: { available: boolean; messages: ConversationMessageView[]; failedMessageIndex: number | null };
  /** The failed call's envelope as the model read it (the tool message's content) and parsed. */
  envelope: { text: string | null; parsed: unknown } | null;
  /** The failure-log record of the envelope's `trace_id`. */
  developerRecord: ToolFailureLogRecord | null;
  developerRecordNote: string;
  ledger: LedgerCallView[];
  breakers: BreakerView[];
}

function parseEnvelope(text: string | null): EnvelopeLike | undefined {
  if (text === null) return undefined;
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end < start) return undefined;
  try {
    return JSON.parse(text.slice(start, end + 1)) as EnvelopeLike;
  } catch {
    return undefined;
  }
}

/**
 * A stored message's role: toolrun's and most SDKs' `role`; an OpenAI Agents item's `type`
 * (`function_call`, `function_call_result`) when it has no role.
 */
function roleOf(message: unknown): string {
  const { role, type } = (typeof message === 'object' && message !== null ? message : {}) as { role?: unknown; type?: unknown };
  if (typeof role === 'string') return role;
  return typeof type === 'string' ? type : '?';
}

/**
 * A stored message's text: its `content` when it is a string; otherwise (an SDK's content parts, an
 * OpenAI Agents item, an MCP proxy's call) the message as JSON without its role, so a host's
 * conversation reads as what it holds.
 */
function contentOf(message: unknown): string | null {
  if (typeof message !== 'object' || message === null) return message === undefined ? null : JSON.stringify(message);
  const { role, content, ...rest } = message as { role?: unknown; content?: unknown };
  if (typeof content === 'string') return content;
  if (typeof content === 'object' && content !== null) return JSON.stringify(content) ?? null;
  // toolrun's own assistant turn with tool calls only: the calls are shown apart
  if (typeof role === 'string' || 'toolCalls' in rest) return null;
  return JSON.stringify(rest) ?? null;
}

function replayPlanOf(kind: ToolDeadLetterKind, entry: ReturnType<typeof asToolEntry>, ledger: readonly LedgerCallView[]): string {
  const host = hostOfEntry(entry);
  if (host !== undefined) return hostReplayPlanText(host, entry.toolName);
  const applied = ledger.filter((call) => call.outcome === 'applied').length;
  const keep = `${applied} call${applied === 1 ? '' : 's'} recorded as applied ${applied === 1 ? 'is' : 'are'} not run again.`;
  const claim = 'The run is claimed first: while a worker, a drain or the CLI holds it, the replay does nothing (in_progress).';
  switch (kind) {
    case 'model':
      return `A replay calls the model ${entry.modelName ?? '?'} again at step ${entry.stepIndex ?? '?'} with the stored conversation, then goes on with the run. ${keep} ${claim}`;
    case 'run':
      return `A replay resumes run ${entry.runId ?? '?'} from its checkpoint at step ${entry.stepIndex ?? '?'} (every delivery of its message failed: fix the cause first). ${keep} ${claim}`;
    case 'tool':
      return `A replay re-executes the failed call to ${entry.toolName ?? '?'} at step ${entry.stepIndex ?? '?'} with its real arguments from the stored conversation, then calls the model only for the remaining steps. ${keep} ${claim}`;
    default:
      return 'This entry lacks the run id, step or conversation a replay needs: a replay ends invalid_entry and changes nothing.';
  }
}

/** The detail of a tool-DLQ record. */
export async function toolEntryDetail(record: DeadLetterRecord<unknown>, context: DetailContext): Promise<ToolEntryDetail> {
  const entry = asToolEntry(record.entry);
  const kind = toolDeadLetterKind(record.entry);
  const [row] = await toolEntryRows([record], context);
  const runId = typeof entry.runId === 'string' ? entry.runId : undefined;
  const failedStep = Number.isInteger(entry.stepIndex) ? (entry.stepIndex as number) : undefined;
  const [checkpoint, stored] = await Promise.all([
    runId !== undefined ? context.stores.runs.get(runId) : undefined,
    typeof entry.conversationRef === 'string' ? context.stores.conversations.get(entry.conversationRef) : undefined,
  ]);
  const messages = Array.isArray(stored) ? (stored as ChatMessage[]) : [];
  // The last assistant message is the failed step; earlier ones are the steps before it, then history.
  const assistantIndexes = messages.flatMap((message, index) => (message?.role === 'assistant' ? [index] : []));
  const stepOfAssistant = new Map<number, number | null>();
  assistantIndexes.forEach((messageIndex, position) => {
    const step = failedStep === undefined ? null : failedStep - (assistantIndexes.length - 1 - position);
    stepOfAssistant.set(messageIndex, step !== null && step >= 0 ? step : null);
  });
  const failedAssistant = assistantIndexes[assistantIndexes.length - 1];
  const failedCalls = new Set<string>();
  const ledger: LedgerCallView[] = [];
  let failedMessageIndex: number | null = null;
  if (runId !== undefined) {
    for (const [messageIndex, step] of stepOfAssistant) {
      if (step === null) continue;
      const calls = messages[messageIndex]?.toolCalls ?? [];
      const outcomes = await Promise.all(
        calls.map(async (call, callIndex) => ({
          call,
          callIndex,
          value: (await context.stores.ledger.get(ledgerKey(runId, step, callIndex))) as EnvelopeLike | undefined,
        })),
      );
      for (const { call, callIndex, value } of outcomes) {
        const outcome = value === undefined ? 'not-recorded' : value.status === 'success' ? 'applied' : 'failed';
        ledger.push({ key: ledgerKey(runId, step, callIndex), step, callIndex, toolName: call.name, outcome, traceId: value?.trace_id ?? null });
        if (messageIndex === failedAssistant && outcome !== 'applied' && (kind !== 'tool' || call.name === entry.toolName || failedCalls.size === 0)) {
          failedCalls.add(call.id);
        }
      }
    }
  }
  let currentStep: number | null = null;
  const views: ConversationMessageView[] = messages.map((message, index) => {
    if (message?.role === 'assistant') currentStep = stepOfAssistant.get(index) ?? null;
    const isFailedResult = message?.role === 'tool' && failedCalls.has(message.toolCallId ?? '') && index > (failedAssistant ?? Infinity);
    const calls = message?.toolCalls?.map((call) => ({
      id: call.id,
      name: call.name,
      args: call.args,
      highlighted: index === failedAssistant && failedCalls.has(call.id),
    }));
    const highlighted = isFailedResult || (calls?.some((call) => call.highlighted) ?? false);
    if (highlighted && failedMessageIndex === null) failedMessageIndex = index;
    return {
      index,
      role: roleOf(message),
      content: contentOf(message),
      ...(calls ? { toolCalls: calls } : {}),
      ...(message?.toolCallId !== undefined ? { toolCallId: message.toolCallId } : {}),
      ...(message?.name !== undefined ? { name: message.name } : {}),
      step: message?.role === 'assistant' || message?.role === 'tool' ? currentStep : null,
      highlighted,
    };
  });
  let failedResult = views.find((view) => view.role === 'tool' && view.highlighted);
  if (!failedResult && kind === 'tool') {
    // the run stopped before running the call again (its retry budget was spent): the envelope the
    // model saw is the tool's last failed result
    failedResult = [...views]
      .reverse()
      .find((view) => view.role === 'tool' && view.name === entry.toolName && parseEnvelope(view.content)?.status === 'failed');
    if (failedResult) failedResult.highlighted = true;
  }
  let envelope: ToolEntryDetail['envelope'] = null;
  let traceId: string | undefined;
  if (failedResult) {
    const parsed = parseEnvelope(failedResult.content);
    envelope = { text: failedResult.content, parsed: parsed ?? null };
    traceId = parsed?.trace_id;
  } else if (failedStep !== undefined && runId !== undefined && kind === 'tool') {
    const recorded = await lastFailedEnvelope((key) => context.stores.ledger.get(key), runId, failedStep, entry.toolName);
    if (recorded) {
      envelope = { text: null, parsed: recorded };
      traceId = recorded.trace_id;
    }
  }
  traceId ??= ledger.find((call) => call.step === failedStep && call.outcome === 'failed')?.traceId ?? undefined;
  let developerRecord: ToolFailureLogRecord | null = null;
  let developerRecordNote: string;
  if (traceId === undefined)
    developerRecordNote = kind === 'tool' ? 'no envelope with a trace_id was found for the failed call' : `a ${kind} entry has no failed tool call to join`;
  else if (!context.developerRecord) developerRecordNote = `no failure log on this backend to join trace_id ${traceId} with`;
  else {
    developerRecord = (await context.developerRecord(traceId)) ?? null;
    developerRecordNote = developerRecord ? `joined by trace_id ${traceId}` : `no failure-log record has trace_id ${traceId}`;
  }
  const breakerKey = kind === 'model' ? `model:${entry.modelName ?? ''}` : (entry.toolName ?? '');
  return {
    id: record.id,
    addedAt: record.addedAt,
    kind,
    row: row!,
    entry: record.entry,
    replayPlan: replayPlanOf(kind, entry, ledger),
    estimate: estimateReplay([record]),
    checkpoint: checkpoint
      ? { status: checkpoint.status, stepIndex: checkpoint.stepIndex, updatedAt: checkpoint.updatedAt, tokensSpent: checkpoint.tokensSpent }
      : null,
    conversation: { available: Array.isArray(stored), messages: views, failedMessageIndex },
    envelope,
    developerRecord,
    developerRecordNote,
    ledger,
    breakers: await readBreakers(context.stores.breakers, [breakerKey]),
  };
}

/** The detail of a message-DLQ record: its raw body (redacted before it leaves the server, unlike `dlq show`) and its field-level reason. */
export function messageEntryDetail(record: DeadLetterRecord<unknown>, nowMs: number) {
  const message = asMessageEntry(record.entry);
  const [row] = messageEntryRows([record], nowMs);
  return {
    id: record.id,
    addedAt: record.addedAt,
    row: row!,
    rawBody: String(message.rawBody ?? ''),
    rawBodyTruncated: message.rawBodyTruncated === true,
    reason: {
      code: String(message.reason?.code ?? 'unknown'),
      detail: String(message.reason?.detail ?? ''),
      fields: (message.reason?.fields ?? []).map((field) => ({
        path: String(field.path ?? ''),
        problem: String(field.problem ?? ''),
        expected: field.expected ?? null,
        received: field.received ?? null,
      })),
      deliveries: message.reason?.deliveries ?? null,
    },
    messageId: message.messageId ?? null,
    receivedAt: message.receivedAt ?? null,
    notice:
      'The raw body is the message as received; the dashboard shows it redacted (the store keeps it as received). A message-DLQ entry is not replayed: fix the body and enqueue it again.',
  };
}
