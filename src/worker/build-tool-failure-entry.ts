import type { AgentRunResult } from '../agent/run-agent.ts';
import type { ToolFailureInfo } from '../agent/run-state.ts';
import { redactBounded } from '../core/build-failure.ts';
import { truncateUtf8, utf8ByteLength } from '../ground/utf8.ts';
import type { Redactor } from '../core/redact.ts';
import type { ToolFailureEntry } from '../ground/dead-letter-entries.ts';

/** Bound of a tool-DLQ entry's `toolArgs`, in UTF-8 bytes of their JSON. */
export const MAX_TOOL_ARGS_BYTES = 8192;
/** Bound of a tool-DLQ entry's `lastError.message`, in UTF-8 bytes (cut before redaction). */
export const MAX_LAST_ERROR_BYTES = 1024;
/** Bound of a tool-DLQ entry's `toolName` (the model's text when it named no registered tool), in UTF-8 bytes. */
export const MAX_ENTRY_TOOL_NAME_BYTES = 128;
/** Raw argument text longer than this (in code units) is not parsed: it is kept as a redacted preview. */
const MAX_PARSED_ARGUMENT_UNITS = 65_536;

/**
 * What a tool-DLQ entry keeps of arguments whose redacted JSON is over 8 KiB:
 * a preview of that JSON (or of the raw text), cut and marked. A replay does not read it: it
 * resumes from the arguments in the stored conversation.
 */
export interface ToolArgsPreview {
  truncated: true;
  /** The redacted JSON (or raw text), cut to fit the bound, ending `… [truncated]`. */
  preview: string;
  /** UTF-8 bytes of what was cut (the redacted JSON, or the raw text). */
  bytes: number;
  note: string;
}

const PREVIEW_NOTE = 'arguments cut to fit the entry; a replay reads them from the stored conversation';
/** Room the preview's own fields take in the bound. */
const PREVIEW_OVERHEAD_BYTES = 256;

function preview(text: string, bytes: number): ToolArgsPreview {
  return { truncated: true, preview: truncateUtf8(text, MAX_TOOL_ARGS_BYTES - PREVIEW_OVERHEAD_BYTES), bytes, note: PREVIEW_NOTE };
}

/**
 * The entry's `toolArgs`: redacted by the same rules as logs (the redactor, the tool's sensitive
 * keys) with a text budget of twice the bound, then kept whole when its JSON fits
 * {@link MAX_TOOL_ARGS_BYTES}, else as a {@link ToolArgsPreview}. Never throws.
 */
export function boundedToolArgs(args: unknown, redactor: Redactor, sensitiveKeys: readonly string[]): unknown {
  let value = args;
  if (typeof args === 'string') {
    if (args.length > MAX_PARSED_ARGUMENT_UNITS) return preview(redactBounded(redactor, args, MAX_TOOL_ARGS_BYTES), utf8ByteLength(args));
    try {
      value = JSON.parse(args) as unknown;
    } catch {
      // Not JSON (the model's malformed arguments): the redacted text, or a preview of it.
      const bytes = utf8ByteLength(args);
      const text = redactBounded(redactor, args, MAX_TOOL_ARGS_BYTES - PREVIEW_OVERHEAD_BYTES);
      return bytes > MAX_TOOL_ARGS_BYTES - PREVIEW_OVERHEAD_BYTES ? preview(text, bytes) : text;
    }
  }
  const redacted = redactor.value(value, sensitiveKeys, { maxTextBytes: 2 * MAX_TOOL_ARGS_BYTES });
  let json: string;
  try {
    json = JSON.stringify(redacted) ?? 'null';
  } catch {
    return preview('[unserialisable arguments]', 0);
  }
  const bytes = utf8ByteLength(json);
  return bytes <= MAX_TOOL_ARGS_BYTES ? redacted : preview(json, bytes);
}

/**
 * Builds the tool-DLQ entry of a run that ended `tool_failed`: arguments redacted with the
 * runtime's redactor (plus the tool's sensitive keys) and bounded (see {@link boundedToolArgs}),
 * the last error's message and the tool name cut to their bounds then redacted, the conversation
 * by reference only.
 */
export function buildToolFailureEntry(
  run: Pick<AgentRunResult, 'runId' | 'conversationRef' | 'tokensSpent'>,
  failure: ToolFailureInfo,
  context: { messageId: string; redactor: Redactor; sensitiveKeys: readonly string[]; firstSeenAt: string },
): ToolFailureEntry {
  return {
    kind: 'tool',
    runId: run.runId,
    stepIndex: failure.stepIndex,
    toolName: redactBounded(context.redactor, failure.toolName, MAX_ENTRY_TOOL_NAME_BYTES),
    toolArgs: boundedToolArgs(failure.toolArgs, context.redactor, context.sensitiveKeys),
    attempts: failure.attempts,
    lastError: {
      kind: failure.lastError.kind,
      status: failure.lastError.status,
      message: redactBounded(context.redactor, failure.lastError.message, MAX_LAST_ERROR_BYTES),
    },
    conversationRef: run.conversationRef,
    tokensSpent: { ...run.tokensSpent },
    firstSeenAt: context.firstSeenAt,
    originalMessageId: context.messageId,
    reason: failure.reason,
  };
}
