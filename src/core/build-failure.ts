import { FAILURE_CODES, type FailureCode } from './failure-codes.ts';
import type { FieldError, ToolFailureError } from './tool-result.ts';

/** The parts of a failure a layer knows; the rest is filled in from the code. */
export interface FailureParts {
  code: FailureCode;
  message: string;
  detail?: string;
  suggestion?: string;
  /** Overrides the code's default retryability (e.g. an environment failure after retries is not retryable). */
  retryable?: boolean;
  fields?: FieldError[];
  retryAfterMs?: number;
  availableTools?: string[];
  closestTool?: string;
  fallbacks?: string[];
}

function withFallbacks(text: string, fallbacks: readonly string[] | undefined): string {
  if (!fallbacks || fallbacks.length === 0) return text;
  return `${text} Fallback tools for this: ${fallbacks.join(', ')}.`;
}

/**
 * The default suggestion for the model, per code. Written for a model and a person: what to do
 * next, never "an error occurred".
 */
export function defaultSuggestion(code: FailureCode, fallbacks?: readonly string[]): string {
  switch (code) {
    case 'MALFORMED_ARGUMENTS':
      return 'Send the arguments as one complete JSON object matching the tool schema, and call again.';
    case 'MISSING_REQUIRED':
    case 'INVALID_TYPE':
    case 'INVALID_ENUM':
    case 'INVALID_FORMAT':
    case 'DATE_FORMAT_ERROR':
    case 'OUT_OF_RANGE':
    case 'UNKNOWN_PARAMETER':
    case 'SCHEMA_VALIDATION_FAILED':
      return 'Fix the fields listed in `fields` as described and call the tool again.';
    case 'INVALID_INPUT':
      return 'The tool rejected these arguments: correct them as the detail says and call again.';
    case 'TIMEOUT':
    case 'UNAVAILABLE':
    case 'RATE_LIMITED':
    case 'NETWORK_ERROR':
    case 'BUDGET_EXHAUSTED':
      return withFallbacks('The tool is temporarily unavailable and was already retried. Do not call it again now: use another way, or tell the user it is unavailable.', fallbacks);
    case 'PERMISSION_DENIED':
      return withFallbacks('Access is denied for this action. Do not retry: ask the user for the needed permission or choose another action.', fallbacks);
    case 'AUTH_EXPIRED':
      return withFallbacks('The credentials for this tool were rejected. Do not retry: tell the user the tool cannot be used right now.', fallbacks);
    case 'TOOL_NOT_FOUND':
      return 'No tool has this name. Call one of `available_tools` instead (see `closest_tool`).';
    case 'NOT_FOUND':
      return 'What was asked for does not exist. Check the identifiers with the user or a lookup tool before calling again.';
    case 'PRECONDITION_FAILED':
      return withFallbacks('A rule of the tool refused this action. Do not repeat it unchanged: change the plan or explain to the user.', fallbacks);
    case 'TOOL_EXCEPTION':
      return withFallbacks('The tool failed unexpectedly. Do not call it again with the same arguments: use another tool or answer the user.', fallbacks);
    case 'OUTPUT_TOO_LARGE':
      return 'The result was too large to return. Ask for less: narrow the query, filter or paginate.';
    case 'CANCELLED':
      return 'The call was cancelled before it finished.';
    case 'TOO_MANY_FAILURES':
      return withFallbacks('This tool failed too many times in a row in this session. Stop calling it: use another tool or answer the user with what you have.', fallbacks);
    case 'CIRCUIT_OPEN':
      return withFallbacks('This tool is currently broken for everyone and is switched off. Do not call it: use another tool or tell the user.', fallbacks);
    default: {
      const unreachable: never = code;
      return unreachable;
    }
  }
}

/** Builds the envelope's `error` member. The only way failures are made. */
export function buildFailure(parts: FailureParts): ToolFailureError {
  const definition = FAILURE_CODES[parts.code];
  const error: ToolFailureError = {
    type: definition.type,
    code: parts.code,
    message: parts.message,
    detail: parts.detail ?? parts.message,
    retryable: parts.retryable ?? definition.retryable,
    suggestion: parts.suggestion ?? defaultSuggestion(parts.code, parts.fallbacks),
  };
  if (parts.fields && parts.fields.length > 0) error.fields = parts.fields;
  if (parts.retryAfterMs !== undefined) error.retry_after_ms = parts.retryAfterMs;
  if (parts.availableTools) error.available_tools = parts.availableTools;
  if (parts.closestTool !== undefined) error.closest_tool = parts.closestTool;
  if (parts.fallbacks && parts.fallbacks.length > 0) error.fallbacks = parts.fallbacks;
  return error;
}

/** Cuts `text` to at most `maxBytes` UTF-8 bytes, marking the cut. */
export function truncateText(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const marker = '… [truncated]';
  const room = Math.max(0, maxBytes - Buffer.byteLength(marker, 'utf8'));
  let cut = text.slice(0, room);
  while (Buffer.byteLength(cut, 'utf8') > room && cut.length > 0) cut = cut.slice(0, -1);
  return cut + marker;
}

/** Removes host file paths and stack frames from a tool's error text. */
export function sanitiseErrorText(text: string): string {
  return text
    .split('\n')
    .filter((line) => !/^\s*at\s/.test(line))
    .join('\n')
    .replace(/file:\/\/\S+/g, '<path>')
    .replace(/(?:[A-Za-z]:\\(?:[\w.@ -]+\\)*[\w.@-]+|\/(?:home|root|usr|var|tmp|opt|etc|srv|mnt|app|work|workspace|Users|private|proc|node_modules)(?:\/[\w.@-]+)+)/g, '<path>')
    .replace(/\(?<path>(?::\d+)+\)?/g, '<path>')
    .replace(/\s+at\s+<path>/g, '')
    .trim();
}
