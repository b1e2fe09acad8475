import { isLowSurrogateAt, truncateUtf8 } from '../ground/utf8.ts';
import { FAILURE_CODES, type FailureCode } from '../ground/failure-codes.ts';
import type { FieldError, ToolFailureError } from '../ground/tool-result.ts';
import type { Redactor } from './redact.ts';

/** The parts of a failure a layer knows; the rest is filled in from the code. */
export interface FailureParts {
  code: FailureCode;
  message: string;
  detail?: string;
  suggestion?: string;
  /** Overrides the code's default retryability (e.g. an environment failure after retries is not retryable). */
  retryable?: boolean;
  fields?: FieldError[];
  /** Field-level problems found but not in `fields` (the envelope's `omitted_fields`). */
  omittedFields?: number;
  retryAfterMs?: number;
  availableTools?: string[];
  closestTool?: string;
  fallbacks?: string[];
  /** The call ran once and was not retried (a tool that is not idempotent, a retry budget of one): the suggestion does not claim retries. */
  notRetried?: boolean;
}

function withFallbacks(text: string, fallbacks: readonly string[] | undefined): string {
  if (!fallbacks || fallbacks.length === 0) return text;
  return `${text} Fallback tools for this: ${fallbacks.join(', ')}.`;
}

/**
 * The default suggestion for the model, per code. Written for a model and a person: what to do
 * next, never "an error occurred".
 */
export function defaultSuggestion(code: FailureCode, fallbacks?: readonly string[], notRetried = false): string {
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
      return withFallbacks(
        notRetried
          ? 'The tool is temporarily unavailable (this call ran once and was not retried automatically). Do not call it again now: use another way, or tell the user it is unavailable.'
          : 'The tool is temporarily unavailable and was already retried. Do not call it again now: use another way, or tell the user it is unavailable.',
        fallbacks,
      );
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
    case 'CALL_LIMIT_EXCEEDED':
      return withFallbacks(
        'Too many tool calls are running at once, as when a tool calls tools recursively. Do not call this tool again now: answer with what you have.',
        fallbacks,
      );
    case 'TOO_MANY_FAILURES':
      return withFallbacks(
        'This tool failed too many times in a row in this session. Stop calling it: use another tool or answer the user with what you have.',
        fallbacks,
      );
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
    suggestion: parts.suggestion ?? defaultSuggestion(parts.code, parts.fallbacks, parts.notRetried === true),
  };
  if (parts.fields && parts.fields.length > 0) error.fields = parts.fields;
  if (parts.omittedFields !== undefined && parts.omittedFields > 0) error.omitted_fields = parts.omittedFields;
  if (parts.retryAfterMs !== undefined) error.retry_after_ms = parts.retryAfterMs;
  if (parts.availableTools) error.available_tools = parts.availableTools;
  if (parts.closestTool !== undefined) error.closest_tool = parts.closestTool;
  if (parts.fallbacks && parts.fallbacks.length > 0) error.fallbacks = parts.fallbacks;
  return error;
}

/**
 * Code units kept past a bound before redaction: a secret that the first cut splits (and the
 * redactor may then fail to recognise) lies in this margin, past the final bound.
 */
export const REDACTION_MARGIN_UNITS = 4096;

/**
 * Redacts model- or tool-controlled `text` and cuts it to `maxBytes` UTF-8 bytes, in time linear in
 * `maxBytes` rather than in the length of `text`: the text is first cut to `maxBytes` plus a margin
 * of 4,096 UTF-16 code units, then `redactor.text` runs on that, then the result is cut to
 * `maxBytes` with `truncateUtf8` (marked `… [truncated]` when anything was cut, including by
 * the first cut). If redaction shrank the text so much that the margin could have moved into the
 * kept part, the margin is doubled and the cut redacted again, so a secret split by the first cut
 * (up to about 2,000 code units long) never reaches the output.
 *
 * @returns the redacted, bounded text; never throws unless `redactor.text` does.
 */
export function redactBounded(redactor: Pick<Redactor, 'text'>, text: string, maxBytes: number): string {
  const bound = Math.max(0, Math.floor(maxBytes));
  let margin = REDACTION_MARGIN_UNITS;
  for (;;) {
    const limit = bound + margin;
    if (text.length <= limit) return truncateUtf8(redactor.text(text), bound, false);
    let end = limit;
    // Do not leave a lone high surrogate at the cut.
    if (isLowSurrogateAt(text, end)) end -= 1;
    const cut = text.slice(0, end);
    const redacted = redactor.text(cut);
    if (cut.length - redacted.length <= margin / 2) return truncateUtf8(redacted, bound, true);
    margin *= 2;
  }
}

/** First segments of an absolute POSIX path that are host paths (replaced whatever follows). */
const HOST_ROOTS = new Set([
  'home',
  'root',
  'usr',
  'var',
  'tmp',
  'opt',
  'etc',
  'srv',
  'mnt',
  'app',
  'apps',
  'work',
  'workspace',
  'workspaces',
  'Users',
  'private',
  'proc',
  'node_modules',
  'src',
  'lib',
  'lib64',
  'bin',
  'sbin',
  'data',
  'run',
  'nix',
  'snap',
  'Library',
  'System',
  'Volumes',
  'build',
  'builds',
  'code',
  'go',
  'workdir',
  'runner',
  'github',
  'dev',
  'sys',
  'media',
  'boot',
  'cygdrive',
]);
/** Extensions of source and binary files: an absolute path ending in one is a host path whatever its root. */
const SOURCE_EXTENSION =
  /\.(?:[cm]?js|[cm]?ts|jsx|tsx|py|pyc|go|java|kt|kts|scala|groovy|rb|rs|php|cs|fs|vb|swift|c|cc|cpp|cxx|h|hpp|m|mm|so|dylib|dll|exe|jar|war|class|wasm|lua|pl|pm|ex|exs|erl|dart|json|ya?ml|toml|ini|env|log|sh)(?::\d+)*$/i;

// Each expression below starts with a literal or a one-character lookbehind and has no nested
// ambiguous quantifier, so a scan costs time linear in the text (checked on 1 MB adversarial input).
const JS_OR_JAVA_FRAME = /^\s*at\s/;
const JAVA_MORE = /^\s*\.\.\. \d+ (?:more|common frames omitted)\s*$/;
const JAVA_CAUSE = /^\s*(?:Caused by|Suppressed):\s/;
const PYTHON_TRACEBACK = /^\s*Traceback \(most recent call last\):\s*$/;
const PYTHON_FRAME = /^\s*File "[^"]*", line \d+/;
const PYTHON_CHAIN =
  /^\s*(?:During handling of the above exception, another exception occurred|The above exception was the direct cause of the following exception):\s*$/;
const GO_GOROUTINE = /^goroutine \d+ \[[^\]]*\]:\s*$/;
const GO_FUNCTION = /^[\w./*()[\]{}-]+\([^()]*\)$/;
const GO_FRAME_FILE = /^\s+\S+\.go:\d+(?: \+0x[0-9a-f]+)?\s*$/;
const FILE_URL = /file:\/\/\S+/g;
const WINDOWS_PATH = /(?<![\w\\])[A-Za-z]:\\(?:[\w.@ ()$~-]+\\)*[\w.@()$~-]*/g;
const UNC_PATH = /(?<![\w\\])\\\\[\w.$-]+(?:\\[\w.@ ()$~-]+(?=\\))*\\[\w.@()$~-]*/g;
const POSIX_PATH = /(?<![\w.:/~-])~?(?:\/[\w.@+-]+){2,}(?::\d+)*/g;
const PATH_WITH_POSITION = /\(?<path>(?::\d+)+\)?/g;
const GO_OFFSET = /<path> \+0x[0-9a-f]+/g;
const AT_PATH = / at <path>/g;

/**
 * Removes stack traces and host file paths from a tool's error text, so `detail` says what failed,
 * not where in the host's code:
 * - stack frames of JavaScript and Java (`at …`), Java's `Caused by:`, `Suppressed:` and
 *   `... 5 more`, Python tracebacks (`Traceback (most recent call last):`, `File "…", line N, in f`
 *   and the source line after it; the final `ValueError: …` line stays), Go goroutine dumps
 *   (`goroutine 1 [running]:` and the frames after it: `main.main()`, `\t/src/x.go:12 +0x1d`,
 *   `created by …`);
 * - paths, replaced by `<path>`: `file://` URLs, Windows (`C:\…`) and UNC (`\\server\share\…`)
 *   paths, absolute POSIX paths under a host root (`/home`, `/usr`, `/app`, `/src`, `/var`, …) or
 *   ending in a source or binary file name (`/x/y.go:12`); other absolute paths (an API route such
 *   as `/v1/users/42`) stay.
 *
 * Linear in the length of `text` (cut it to its bound first: see {@link redactBounded}).
 */
export function sanitiseErrorText(text: string): string {
  const kept: string[] = [];
  let mode: 'text' | 'python' | 'python-source' | 'go' = 'text';
  for (const line of text.split('\n')) {
    if (mode === 'go') {
      if (line.trim() === '' || /^\s/.test(line) || GO_GOROUTINE.test(line) || GO_FUNCTION.test(line) || line.startsWith('created by ')) continue;
      mode = 'text';
    }
    if (mode === 'python-source') {
      mode = 'python';
      if (/^\s{2,}\S/.test(line) && !PYTHON_FRAME.test(line)) continue;
    }
    if (mode === 'python') {
      if (PYTHON_FRAME.test(line)) {
        mode = 'python-source';
        continue;
      }
      if (line.trim() === '' || /^\s/.test(line)) continue;
      mode = 'text';
    }
    if (PYTHON_TRACEBACK.test(line)) {
      mode = 'python';
      continue;
    }
    if (GO_GOROUTINE.test(line)) {
      mode = 'go';
      continue;
    }
    if (PYTHON_FRAME.test(line)) {
      mode = 'python-source';
      continue;
    }
    if (JS_OR_JAVA_FRAME.test(line) || JAVA_MORE.test(line) || JAVA_CAUSE.test(line) || PYTHON_CHAIN.test(line) || GO_FRAME_FILE.test(line)) continue;
    kept.push(line);
  }
  return kept
    .join('\n')
    .replace(FILE_URL, '<path>')
    .replace(WINDOWS_PATH, '<path>')
    .replace(UNC_PATH, '<path>')
    .replace(POSIX_PATH, (path) => (isHostPath(path) ? '<path>' : path))
    .replace(PATH_WITH_POSITION, '<path>')
    .replace(GO_OFFSET, '<path>')
    .replace(AT_PATH, '')
    .trim();
}

function isHostPath(path: string): boolean {
  if (path.startsWith('~')) return true;
  const end = path.indexOf('/', 1);
  const root = path.slice(1, end === -1 ? undefined : end);
  if (HOST_ROOTS.has(root)) return true;
  return SOURCE_EXTENSION.test(path);
}
