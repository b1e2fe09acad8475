/**
 * Size bounds of the failure envelope: everything in it that a model or a tool controls (names,
 * keys, received values, error text) is cut before it is redacted, then the whole envelope is
 * measured as JSON and shrunk until it fits.
 */
import { redactBounded } from './build-failure.ts';
import { truncateUtf8, utf8ByteLength } from '../ground/utf8.ts';
import type { Redactor } from './redact.ts';
import { redactFieldErrors } from './redact-fields.ts';
import type { FieldError, ToolFailure, ToolFailureError } from '../ground/tool-result.ts';

/** Bounds of a failure envelope, in UTF-8 bytes unless named otherwise. */
export interface EnvelopeBounds {
  /** The whole envelope as JSON. */
  maxEnvelopeBytes: number;
  /** Field errors listed; the rest are counted in `omitted_fields`. */
  maxFieldErrors: number;
  /** `detail`. */
  maxErrorTextBytes: number;
}

/** Default total bound of a failure envelope's JSON, in UTF-8 bytes. */
export const DEFAULT_MAX_ENVELOPE_BYTES = 16_384;
/** The smallest `maxEnvelopeBytes` accepted: the last-resort envelope always fits in it. */
export const MIN_MAX_ENVELOPE_BYTES = 2048;
/** Default number of field errors an envelope lists. */
export const DEFAULT_MAX_FIELD_ERRORS = 20;

/** Bounds of the envelope's identifiers and texts, in UTF-8 bytes. */
const LIMITS = {
  toolName: 256,
  id: 256,
  message: 512,
  suggestion: 1024,
  field: 256,
  problem: 64,
  registeredName: 128,
  availableTools: 50,
  fallbacks: 20,
} as const;

/** An identifier the caller chose (`call_id`, `trace_id`), bounded but not redacted. */
export function boundIdentifier(value: unknown): string {
  const text = typeof value === 'string' ? value : safeString(value);
  return text.length <= LIMITS.id / 3 ? text : truncateUtf8(text, LIMITS.id);
}

/** A tool name the model sent, bounded and redacted (an unknown name is echoed back). */
export function boundToolName(redactor: Pick<Redactor, 'text'>, name: string): string {
  // Short clean names skip the redactor: too short for any key family (API keys, JWTs, AWS ids need
  // more), and not a card number. Anything longer is model text that may be a secret sent as a name.
  return name.length <= 16 && /^[A-Za-z0-9_.:/-]*$/.test(name) && !/^\d+$/.test(name) ? name : safeRedact(redactor, name, LIMITS.toolName);
}

function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return typeof value;
  }
}

function safeRedact(redactor: Pick<Redactor, 'text'>, text: unknown, maxBytes: number): string {
  try {
    return redactBounded(redactor, typeof text === 'string' ? text : safeString(text), maxBytes);
  } catch {
    return '***';
  }
}

/** Texts up to this many characters that a redactor left unchanged are remembered as clean. */
const MAX_REMEMBERED_CHARS = 512;
/** How many clean texts are remembered per redactor (the set is emptied when full). */
const MAX_REMEMBERED_TEXTS = 2048;

/**
 * A redactor that remembers which short texts it found clean: most envelope texts repeat (the
 * suggestion of a code, `expected` of a format, a field's path), and a text that held nothing to
 * mask the first time holds nothing the next. Only unchanged texts are remembered, so no secret is
 * kept. The runtime makes one for its redactor and bounds every envelope with it.
 */
export function rememberingRedactor(redactor: Redactor): Redactor {
  const clean = new Set<string>();
  const wrapped: Redactor = {
    value: (value, extraKeys, limits) => redactor.value(value, extraKeys, limits),
    text: (text) => {
      if (text.length > MAX_REMEMBERED_CHARS) return redactor.text(text);
      if (clean.has(text)) return text;
      const redacted = redactor.text(text);
      if (redacted === text) {
        if (clean.size >= MAX_REMEMBERED_TEXTS) clean.clear();
        clean.add(text);
      }
      return redacted;
    },
    ...(typeof redactor.isSensitiveKey === 'function'
      ? { isSensitiveKey: (key: string, extraKeys?: readonly string[]) => redactor.isSensitiveKey!(key, extraKeys) }
      : {}),
  };
  return wrapped;
}

/** Structure of an envelope besides its strings (keys, punctuation, numbers), in bytes: a generous upper bound. */
const STRUCTURE_BYTES = 512;
const FIELD_STRUCTURE_BYTES = 96;

/**
 * An upper bound of the envelope's JSON size, without serialising it: each string costs at most 6
 * bytes per UTF-16 code unit as JSON (`\u0001`), plus its quotes.
 */
function jsonBytesAtMost(envelope: ToolFailure): number {
  const error = envelope.error;
  let units =
    envelope.tool_name.length +
    envelope.call_id.length +
    envelope.trace_id.length +
    error.message.length +
    error.detail.length +
    error.suggestion.length +
    (error.closest_tool?.length ?? 0);
  let strings = 7;
  for (const field of error.fields ?? []) {
    units += field.path.length + field.problem.length + (field.expected?.length ?? 0) + (field.received?.length ?? 0) + (field.message?.length ?? 0);
    strings += 5;
  }
  for (const name of error.available_tools ?? []) units += name.length;
  for (const name of error.fallbacks ?? []) units += name.length;
  strings += (error.available_tools?.length ?? 0) + (error.fallbacks?.length ?? 0);
  return 6 * units + 3 * strings + STRUCTURE_BYTES + FIELD_STRUCTURE_BYTES * (error.fields?.length ?? 0);
}

function jsonBytes(value: unknown): number {
  return utf8ByteLength(JSON.stringify(value));
}

/**
 * Bounds a failure envelope (see the module comment). Texts are redacted with `redactor` (best a
 * {@link rememberingRedactor}: envelope texts repeat) after
 * being cut; field errors go through `redactFieldErrors` (a field whose name is sensitive has its
 * received value masked). `sensitiveKeys` are the tool's own. When fields are dropped, the model is
 * told how many: `omitted_fields` and "(and N more …)" at the end of `detail`. Never throws; the
 * result's JSON is at most `bounds.maxEnvelopeBytes` bytes (at least {@link MIN_MAX_ENVELOPE_BYTES}).
 */
export function boundFailureEnvelope(envelope: ToolFailure, redactor: Redactor, bounds: EnvelopeBounds, sensitiveKeys?: readonly string[]): ToolFailure {
  const source = envelope.error;
  const fields = source.fields ?? [];
  const redacted = redactFields(redactor, fields, bounds.maxFieldErrors, sensitiveKeys);
  const mask = redacted.maskText;
  const error: ToolFailureError = {
    type: source.type,
    code: source.code,
    message: mask(safeRedact(redactor, source.message, LIMITS.message)),
    detail: mask(safeRedact(redactor, source.detail, bounds.maxErrorTextBytes)),
    retryable: source.retryable,
    suggestion: mask(safeRedact(redactor, source.suggestion, LIMITS.suggestion)),
  };
  const previouslyOmitted = source.omitted_fields ?? 0;
  let kept = redacted.fields;
  if (kept.length > 0) error.fields = kept;
  if (source.retry_after_ms !== undefined) error.retry_after_ms = source.retry_after_ms;
  if (source.available_tools)
    error.available_tools = source.available_tools.slice(0, LIMITS.availableTools).map((name) => truncateUtf8(name, LIMITS.registeredName));
  if (source.closest_tool !== undefined) error.closest_tool = truncateUtf8(source.closest_tool, LIMITS.registeredName);
  if (source.fallbacks) error.fallbacks = source.fallbacks.slice(0, LIMITS.fallbacks).map((name) => truncateUtf8(name, LIMITS.registeredName));
  const detail = error.detail;
  const result: ToolFailure = {
    status: 'failed',
    tool_name: boundToolName(redactor, envelope.tool_name),
    call_id: boundIdentifier(envelope.call_id),
    duration_ms: envelope.duration_ms,
    attempts: envelope.attempts,
    trace_id: boundIdentifier(envelope.trace_id),
    error,
  };
  const setOmitted = () => {
    const omitted = previouslyOmitted + fields.length - kept.length;
    if (omitted > 0) {
      error.omitted_fields = omitted;
      error.detail = `${detail} (and ${omitted} more problem${omitted === 1 ? '' : 's'} not listed in fields)`;
    }
    if (kept.length > 0) error.fields = kept;
    else delete error.fields;
  };
  setOmitted();
  // Most envelopes are far below the bound: an upper bound of their size settles it without serialising.
  if (jsonBytesAtMost(result) <= bounds.maxEnvelopeBytes || jsonBytes(result) <= bounds.maxEnvelopeBytes) return result;

  // Over the bound: drop fields from the end, then shorten the lists, then the texts.
  while (kept.length > 1 && jsonBytes(result) > bounds.maxEnvelopeBytes) {
    kept = kept.slice(0, Math.max(1, Math.floor(kept.length / 2)));
    setOmitted();
  }
  const steps: Array<() => void> = [
    () => {
      if (error.available_tools) error.available_tools = error.available_tools.slice(0, 10);
    },
    () => {
      kept = [];
      setOmitted();
    },
    () => {
      delete error.available_tools;
      delete error.fallbacks;
    },
    () => {
      error.detail = truncateUtf8(error.detail, 512);
      error.suggestion = truncateUtf8(error.suggestion, 512);
      error.message = truncateUtf8(error.message, 256);
    },
  ];
  for (const step of steps) {
    if (jsonBytes(result) <= bounds.maxEnvelopeBytes) return result;
    step();
  }
  if (jsonBytes(result) <= bounds.maxEnvelopeBytes) return result;
  // The last resort (JSON escapes can make short texts long): fixed texts, short identifiers.
  result.tool_name = truncateUtf8(result.tool_name, 64);
  result.call_id = truncateUtf8(result.call_id, 64);
  result.trace_id = truncateUtf8(result.trace_id, 64);
  error.message = 'The failure could not be described within the envelope size bound.';
  error.detail = error.omitted_fields !== undefined ? `${error.omitted_fields} problems are not listed.` : '';
  error.suggestion = truncateUtf8(error.suggestion, 256);
  delete error.closest_tool;
  return result;
}

function redactFields(
  redactor: Redactor,
  fields: readonly FieldError[],
  maxFields: number,
  sensitiveKeys: readonly string[] | undefined,
): { fields: FieldError[]; maskText: (text: string) => string } {
  if (fields.length === 0) return { fields: [], maskText: (text) => text };
  try {
    const bounded = redactFieldErrors(redactor, fields, { maxFields, maxBytes: LIMITS.field, ...(sensitiveKeys ? { extraKeys: sensitiveKeys } : {}) });
    return {
      fields: bounded.fields.map((field) => ({
        ...field,
        problem: truncateUtf8(safeString(field.problem), LIMITS.problem),
      })),
      maskText: bounded.maskText,
    };
  } catch {
    return { fields: [], maskText: (text) => text };
  }
}
