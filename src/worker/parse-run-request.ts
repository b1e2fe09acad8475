import type { ChatMessage } from '../agent/messages.ts';
import { redactBounded } from '../core/build-failure.ts';
import type { Redactor } from '../core/redact.ts';
import { redactFieldErrors } from '../core/redact-fields.ts';
import { isOverIdBound, MAX_ID_BYTES } from '../ground/identifier-bound.ts';
import type { CompiledToolSchema } from '../ground/ports/schema-validator.ts';
import { truncateUtf8, utf8ByteLength } from '../ground/utf8.ts';
import { createAjvSchemaValidator } from '../schema/ajv-schema-validator.ts';
import type { MessageFailureEntry } from '../ground/dead-letter-entries.ts';
import type { RunMessage } from './handle-message-options.ts';
import { describeRunRequestFailure, RUN_REQUEST_SCHEMA, type RunRequest } from './message-schema.ts';

/** The bound of the raw body kept in a message-DLQ entry of a body over `maxBodyBytes`. */
const MAX_REJECTED_BODY_BYTES = 65_536;
/** Field problems kept in a message-DLQ entry. */
const MAX_REJECTED_FIELDS = 20;

let requestSchema: CompiledToolSchema | undefined;

/** {@link RUN_REQUEST_SCHEMA}, compiled on first use. Strict: a message comes from a program, not a model, so `null` is not read as "absent". */
function runRequestSchema(): CompiledToolSchema {
  return (requestSchema ??= createAjvSchemaValidator({ nullAsAbsent: false }).compile(RUN_REQUEST_SCHEMA, { coerce: 'none' }));
}

/**
 * Why `text` is not a run request, or `undefined` when it is one: `not valid JSON (…)` or `not a
 * run request: <the validator's detail> (…)`. What `toolrun enqueue` and every redrive check before
 * they enqueue a body.
 */
export function checkRunRequestBody(text: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return `not valid JSON (${error instanceof Error ? error.message : String(error)})`;
  }
  const result = runRequestSchema().validate(parsed);
  if (result instanceof Promise || result.ok) return undefined;
  return `not a run request: ${result.detail} (the smallest valid body is {"input": "..."})`;
}

/** A text for a body that is not a string; never throws (`String()` does for a null-prototype object). */
function describeNonStringBody(body: unknown): string {
  try {
    return String(body);
  } catch {
    return Object.prototype.toString.call(body);
  }
}

/** Why a message is rejected: its code, a text, the fields at fault, and the deliveries it had. */
export interface MessageRejection {
  code: MessageFailureEntry['reason']['code'];
  detail: string;
  fields?: MessageFailureEntry['reason']['fields'];
  deliveries?: number;
}

/** The message-DLQ entry of `message`, rejected (`receivedAt` ISO 8601): its body bounded, its texts redacted. */
export function rejectedMessageEntry(
  message: RunMessage,
  { code, detail, fields, deliveries }: MessageRejection,
  { receivedAt, redactor }: { receivedAt: string; redactor: Redactor },
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
      ...(deliveries !== undefined ? { deliveries } : {}),
    },
    // an id within the bound is kept whole (a redrive enqueues under it); a longer one was refused for it
    ...(typeof message?.id === 'string' ? { messageId: isOverIdBound(message.id) ? truncateUtf8(message.id, 512) : message.id } : {}),
    receivedAt,
  };
}

/** Parses and validates a body, and checks the message's id is at most `MAX_ID_BYTES` long; a failure is a message-DLQ entry. */
export function parseRunRequest(
  message: RunMessage,
  maxBodyBytes: number,
  receivedAt: string,
  redactor: Redactor,
): { ok: true; request: RunRequest } | { ok: false; entry: MessageFailureEntry } {
  if (typeof message !== 'object' || message === null || typeof message.body !== 'string') {
    return { ok: false, entry: rejectedMessageEntry(message, { code: 'INVALID_MESSAGE', detail: 'The message has no string body' }, { receivedAt, redactor }) };
  }
  if (typeof message.id === 'string' && isOverIdBound(message.id)) {
    // its run id (`run_<id>`) and keys would be over what a backend can key by
    const detail = `The message id is over ${MAX_ID_BYTES} UTF-8 bytes, the longest id toolrun takes: give the message a shorter id; this one is not retried`;
    return { ok: false, entry: rejectedMessageEntry(message, { code: 'INVALID_MESSAGE', detail }, { receivedAt, redactor }) };
  }
  if (message.body.length > maxBodyBytes / 3 && utf8ByteLength(message.body) > maxBodyBytes) {
    return {
      ok: false,
      entry: rejectedMessageEntry(message, { code: 'BODY_TOO_LARGE', detail: `The body is over ${maxBodyBytes} bytes` }, { receivedAt, redactor }),
    };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(message.body);
  } catch (error) {
    return {
      ok: false,
      entry: rejectedMessageEntry(
        message,
        { code: 'MALFORMED_JSON', detail: truncateUtf8(`The body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`, 512) },
        { receivedAt, redactor },
      ),
    };
  }
  const validation = runRequestSchema().validate(parsed);
  if (validation instanceof Promise) throw new Error('unreachable: JSON Schema validation is synchronous');
  if (!validation.ok) {
    return {
      ok: false,
      entry: rejectedMessageEntry(
        message,
        {
          code: 'INVALID_MESSAGE',
          detail: describeRunRequestFailure(parsed, validation),
          fields: validation.fields.map(({ path, problem, expected, received }) => ({
            path,
            problem,
            ...(expected !== undefined ? { expected } : {}),
            ...(received !== undefined ? { received } : {}),
          })),
        },
        { receivedAt, redactor },
      ),
    };
  }
  return { ok: true, request: validation.value as RunRequest };
}

export function initialMessages(request: RunRequest): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (request.system !== undefined) messages.push({ role: 'system', content: request.system });
  for (const message of request.messages ?? []) messages.push(message as ChatMessage);
  if (request.input !== undefined) messages.push({ role: 'user', content: request.input });
  return messages;
}

/** The run id a message's body names, or the one its id gives (`run_<id>`); undefined when neither can be read. */
export function runIdOf(message: RunMessage): string | undefined {
  let runId: unknown;
  try {
    runId = typeof message?.body === 'string' && message.body.length <= 1_048_576 ? (JSON.parse(message.body) as { runId?: unknown })?.runId : undefined;
  } catch {
    runId = undefined;
  }
  if (typeof runId === 'string' && runId.length > 0) return runId;
  return typeof message?.id === 'string' ? `run_${message.id}` : undefined;
}
