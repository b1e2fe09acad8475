import { kindFromHttpStatus } from '../../core/classify-error.ts';
import { ToolError } from '../../core/tool-error.ts';
import type { ToolErrorKind } from '../../ground/failure-cause.ts';
import { FAILURE_CODES, type FailureCode, type FailureType } from '../../ground/failure-codes.ts';
import type { ToolFailure } from '../../ground/tool-result.ts';

/**
 * The `_meta` key of a structured tool failure on a `CallToolResult`, as in the draft MCP
 * extension "Structured Tool-Failure Classification" (ToolFailure, SEP-3313,
 * `io.modelcontextprotocol/toolFailure`). The draft may still change; toolrun writes and reads this key.
 */
export const TOOL_FAILURE_META_KEY = 'io.modelcontextprotocol/toolFailure';

/** The `_meta` key under which toolrun also puts its whole failure envelope on an `isError` result. */
export const TOOLRUN_ENVELOPE_META_KEY = 'dev.toolrun/envelope';

/**
 * The three failure classes of the draft ToolFailure extension:
 * - `capability`: the call cannot work as made (bad arguments, not found, a refused precondition, a bug);
 * - `reliability`: the environment failed (timeout, unavailable, rate limited, a breaker is open);
 * - `governance`: a permission, a credential or a policy refused it.
 */
export type ToolFailureClass = 'capability' | 'reliability' | 'governance';

/**
 * A structured tool failure, in the shape of the draft MCP extension:
 * - `class`: see {@link ToolFailureClass};
 * - `code`: toolrun's stable failure code (`NOT_FOUND`, `RATE_LIMITED`…), or a server's own;
 * - `retryable`: whether calling again (after fixing what `agentGuidance` says) can help;
 * - `retryNotBefore`: an RFC 3339 timestamp before which a retry is pointless (from a server's
 *   `Retry-After` or rate-limit reset headers);
 * - `correlationId`: joins the failure to the operator's log (toolrun's `trace_id`); the draft
 *   requires it, toolrun also reads failures without it;
 * - `agentGuidance`: what the model should do next.
 *
 * `type` (toolrun's failure type) is an addition of toolrun's.
 */
export interface McpToolFailureClassification {
  class: ToolFailureClass;
  code: string;
  retryable: boolean;
  retryNotBefore?: string;
  correlationId?: string;
  agentGuidance?: string;
  type?: FailureType;
}

/**
 * The ToolFailure class of every toolrun failure code. A code's class follows its failure type
 * (parameters and logic → capability, environment and breakers → reliability, permission →
 * governance) except where the code says more: `CALL_LIMIT_EXCEEDED` is a policy (governance),
 * `CANCELLED` an interrupted execution (reliability).
 */
export const TOOL_FAILURE_CLASS_OF_CODE: Readonly<Record<FailureCode, ToolFailureClass>> = {
  MALFORMED_ARGUMENTS: 'capability',
  MISSING_REQUIRED: 'capability',
  INVALID_TYPE: 'capability',
  INVALID_ENUM: 'capability',
  INVALID_FORMAT: 'capability',
  DATE_FORMAT_ERROR: 'capability',
  OUT_OF_RANGE: 'capability',
  UNKNOWN_PARAMETER: 'capability',
  SCHEMA_VALIDATION_FAILED: 'capability',
  INVALID_INPUT: 'capability',
  TIMEOUT: 'reliability',
  UNAVAILABLE: 'reliability',
  RATE_LIMITED: 'reliability',
  NETWORK_ERROR: 'reliability',
  BUDGET_EXHAUSTED: 'reliability',
  PERMISSION_DENIED: 'governance',
  AUTH_EXPIRED: 'governance',
  TOOL_NOT_FOUND: 'capability',
  NOT_FOUND: 'capability',
  PRECONDITION_FAILED: 'capability',
  TOOL_EXCEPTION: 'capability',
  OUTPUT_TOO_LARGE: 'capability',
  CANCELLED: 'reliability',
  CALL_LIMIT_EXCEEDED: 'governance',
  TOO_MANY_FAILURES: 'reliability',
  CIRCUIT_OPEN: 'reliability',
};

const CLASS_OF_TYPE: Readonly<Record<FailureType, ToolFailureClass>> = {
  invalid_parameter: 'capability',
  logic: 'capability',
  environment: 'reliability',
  circuit_breaker: 'reliability',
  permission: 'governance',
};

/**
 * The ToolFailure of a toolrun failure envelope, for `_meta[TOOL_FAILURE_META_KEY]`: the class of
 * its code ({@link TOOL_FAILURE_CLASS_OF_CODE}), its code and `retryable`, `correlationId` = its
 * `trace_id`, `agentGuidance` = its suggestion, and `retryNotBefore` when it has `retry_after_ms`
 * (measured from `nowMs`, ms since the epoch).
 */
export function toolFailureClassification(failure: ToolFailure, nowMs: number): McpToolFailureClassification & { correlationId: string } {
  const { error } = failure;
  const classification: McpToolFailureClassification & { correlationId: string } = {
    class:
      (Object.hasOwn(TOOL_FAILURE_CLASS_OF_CODE, error.code) ? TOOL_FAILURE_CLASS_OF_CODE[error.code] : undefined) ?? CLASS_OF_TYPE[error.type] ?? 'capability',
    code: error.code,
    retryable: error.retryable,
    correlationId: failure.trace_id,
    agentGuidance: error.suggestion,
    type: error.type,
  };
  if (typeof error.retry_after_ms === 'number' && Number.isFinite(error.retry_after_ms)) {
    classification.retryNotBefore = new Date(nowMs + error.retry_after_ms).toISOString();
  }
  return classification;
}

/** The ToolError kind of each toolrun failure code a server may send in its classification. */
const KIND_OF_CODE: Partial<Record<FailureCode, ToolErrorKind>> = {
  INVALID_INPUT: 'invalid_input',
  TIMEOUT: 'timeout',
  UNAVAILABLE: 'server',
  RATE_LIMITED: 'rate_limit',
  NETWORK_ERROR: 'network',
  BUDGET_EXHAUSTED: 'server',
  PERMISSION_DENIED: 'forbidden',
  AUTH_EXPIRED: 'auth',
  TOOL_NOT_FOUND: 'not_found',
  NOT_FOUND: 'not_found',
  PRECONDITION_FAILED: 'precondition',
  TOO_MANY_FAILURES: 'precondition',
  CIRCUIT_OPEN: 'precondition',
};

/** Common codes of other vocabularies (HTTP-ish, gRPC-ish) a server's classification may use. */
const KIND_OF_FOREIGN_CODE: Readonly<Record<string, ToolErrorKind>> = {
  not_found: 'not_found',
  permission_denied: 'forbidden',
  forbidden: 'forbidden',
  unauthenticated: 'auth',
  unauthorized: 'auth',
  rate_limited: 'rate_limit',
  resource_exhausted: 'rate_limit',
  unavailable: 'server',
  deadline_exceeded: 'timeout',
  timeout: 'timeout',
  invalid_argument: 'invalid_input',
  invalid_input: 'invalid_input',
  failed_precondition: 'precondition',
  conflict: 'precondition',
  already_exists: 'precondition',
};

/** The text of an `isError` result's content (its text blocks, joined), bounded to `maxChars`. */
export function resultText(result: { content?: unknown }, maxChars = 8192): string {
  const content = Array.isArray(result.content) ? (result.content as unknown[]) : [];
  const texts: string[] = [];
  let length = 0;
  for (const block of content) {
    if (typeof block !== 'object' || block === null) continue;
    const text = (block as { type?: unknown; text?: unknown }).type === 'text' ? (block as { text?: unknown }).text : undefined;
    if (typeof text !== 'string') continue;
    texts.push(text);
    length += text.length;
    if (length >= maxChars) break;
  }
  const joined = texts.join('\n');
  return joined.length > maxChars ? joined.slice(0, maxChars) : joined;
}

/**
 * Patterns of the free text of `isError` results, first match wins. None is an environment kind:
 * a server that answered with an error result has run the call, and what it said is not retried
 * as if it were transient (a server that wants a retry says so in its `_meta` classification).
 */
const TEXT_PATTERNS: ReadonlyArray<{ kind: ToolErrorKind; pattern: RegExp }> = [
  {
    kind: 'auth',
    pattern:
      /\b(401|unauthori[sz]ed|unauthenticated|invalid (api )?key|invalid[_ ]token|api key (is )?(missing|invalid|expired)|credentials? (rejected|expired|invalid)|authentication failed)\b/i,
  },
  {
    kind: 'forbidden',
    pattern: /\b(access denied|permission denied|forbidden|EACCES|EPERM|not allowed|outside (of )?(the )?allowed director(y|ies)|not permitted)\b/i,
  },
  {
    kind: 'not_found',
    pattern: /\b(ENOENT|no such file( or directory)?|not found|does not exist|doesn't exist|unknown (entity|id|resource)|no (entity|entities) (named|with))\b/i,
  },
  {
    kind: 'invalid_input',
    pattern:
      /\b(invalid (arguments?|params|parameters?|input)|input validation error|validation (error|failed)|MCP error -32602|must be (a|an|one of)|expected (a|an|one of) )/i,
  },
  { kind: 'precondition', pattern: /\b(already exists|EEXIST|conflict|precondition|not empty|ENOTEMPTY|is a directory|EISDIR|not a directory|ENOTDIR)\b/i },
];

/** A ToolError kind from the text of an `isError` result, or `undefined` when no pattern matches. */
export function kindFromFailureText(text: string): ToolErrorKind | undefined {
  for (const { kind, pattern } of TEXT_PATTERNS) if (pattern.test(text)) return kind;
  return undefined;
}

/** Reads a server's classification from a result's `_meta`, when it sent a well-formed one. */
export function readToolFailureClassification(meta: unknown): McpToolFailureClassification | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined;
  const value = (meta as Record<string, unknown>)[TOOL_FAILURE_META_KEY];
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const cls = record.class;
  if (cls !== 'capability' && cls !== 'reliability' && cls !== 'governance') return undefined;
  const classification: McpToolFailureClassification = {
    class: cls,
    code: typeof record.code === 'string' ? record.code : '',
    // A server that does not say the failure is retryable is taken at its word only when it says true.
    retryable: record.retryable === true,
  };
  if (typeof record.retryNotBefore === 'string') classification.retryNotBefore = record.retryNotBefore;
  if (typeof record.correlationId === 'string') classification.correlationId = record.correlationId;
  if (typeof record.agentGuidance === 'string') classification.agentGuidance = record.agentGuidance;
  return classification;
}

/**
 * The ToolError kind of a server's ToolFailure: its code when toolrun knows it (its own codes, or
 * common codes of HTTP and gRPC), else its class — `governance` → `forbidden`, `reliability` →
 * `server`, `capability` → `precondition` (the call cannot work as made; not a guess from its text).
 */
function kindOfClassification(classification: McpToolFailureClassification): ToolErrorKind {
  const code = classification.code;
  if (Object.hasOwn(FAILURE_CODES, code)) {
    const known = KIND_OF_CODE[code as FailureCode];
    if (known !== undefined) return known;
    if (FAILURE_CODES[code as FailureCode].type === 'invalid_parameter') return 'invalid_input';
  }
  const foreign = KIND_OF_FOREIGN_CODE[code.toLowerCase()];
  if (foreign !== undefined) return foreign;
  switch (classification.class) {
    case 'governance':
      return 'forbidden';
    case 'reliability':
      return 'server';
    case 'capability':
      return 'precondition';
  }
}

/**
 * What an `isError: true` tool result means, as an error the toolrun runtime classifies. A server's
 * ToolFailure (`_meta[TOOL_FAILURE_META_KEY]`) when it sent one: the kind of its code or class,
 * `retryable: false` → not retried in-band, `retryNotBefore` → `retryAfterMs` (measured from
 * `nowMs`; an in-band retry waits for it), `agentGuidance` → the suggestion. Else the result's
 * text (a missing file → `not_found`, "Access denied" → `forbidden`, a rejected key → `auth`, a
 * validation message → `invalid_input`); text that matches no pattern gives a plain `Error` (a
 * `TOOL_EXCEPTION`, not retried). The result's text is the message.
 *
 * Whether a retry happens at all is the tool's policy: a tool that is not idempotent is not
 * retried in-band, whatever the server says (as the draft requires of clients).
 */
export function errorFromToolResult(result: { content?: unknown; _meta?: unknown }, nowMs: number): Error {
  const text = resultText(result) || 'the MCP server reported an error without text';
  const classification = readToolFailureClassification(result._meta);
  if (classification) {
    const retryAt = classification.retryNotBefore !== undefined ? Date.parse(classification.retryNotBefore) : Number.NaN;
    const retryAfterMs = Number.isFinite(retryAt) ? Math.max(0, retryAt - nowMs) : undefined;
    return new ToolError({
      kind: kindOfClassification(classification),
      message: text,
      code: classification.code,
      ...(classification.retryable ? {} : { transient: false }),
      ...(classification.agentGuidance !== undefined ? { suggestion: classification.agentGuidance } : {}),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }
  const kind = kindFromFailureText(text);
  if (kind !== undefined) return new ToolError({ kind, message: text });
  const error = new Error(text);
  error.name = 'McpToolError';
  return error;
}

/** The JSON-RPC error codes of MCP (the SDK's `ErrorCode`). */
const MCP_ERROR_CODES = {
  connectionClosed: -32000,
  requestTimeout: -32001,
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
} as const;

function read(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/**
 * Maps what an MCP request threw to an error the runtime classifies:
 * - an `McpError` (JSON-RPC error): `-32000` connection closed → `server` (UNAVAILABLE); `-32001`
 *   request timeout → `timeout`; `-32602` invalid params → `invalid_input`, or `not_found` when it
 *   says the tool is unknown, or `misconfigured` when it is the SDK's refusal of the server's
 *   *result* ("Invalid tools/call result": the server's defect, not the arguments'); `-32601` method not found → `misconfigured` (the server has no
 *   `tools/call`); `-32603` internal error → `server`; `-32700`/`-32600` → `invalid_input`;
 * - a Streamable HTTP transport error (`StreamableHTTPError`, its `code` the HTTP status, or an
 *   {@link McpHttpStatusError} with the response's headers): by status (429 with `Retry-After`, 5xx…);
 * - "Not connected" → `server`.
 * Anything else is returned unchanged (the runtime classifies network codes, `TimeoutError`…).
 */
export function errorFromMcpThrown(thrown: unknown): unknown {
  if (ToolError.is(thrown)) return thrown;
  const name = read(thrown, 'name');
  const code = read(thrown, 'code');
  const message = typeof read(thrown, 'message') === 'string' ? (read(thrown, 'message') as string) : String(thrown);
  const status = read(thrown, 'status');
  if (typeof status === 'number' && name === 'McpHttpStatusError') {
    const kind = kindFromHttpStatus(status) ?? 'server';
    return new ToolError({ kind, status, message, headers: read(thrown, 'headers'), cause: thrown });
  }
  if (name === 'StreamableHTTPError' || (thrown instanceof Error && thrown.constructor.name === 'StreamableHTTPError')) {
    if (typeof code === 'number' && code >= 100) {
      return new ToolError({ kind: kindFromHttpStatus(code) ?? 'server', status: code, message, cause: thrown });
    }
    return new ToolError({ kind: 'server', message, cause: thrown });
  }
  if (typeof code === 'number' && (name === 'McpError' || name === 'ProtocolError' || message.startsWith('MCP error'))) {
    switch (code) {
      case MCP_ERROR_CODES.connectionClosed:
        return new ToolError({ kind: 'server', message: `the MCP server closed the connection (${message})`, cause: thrown });
      case MCP_ERROR_CODES.requestTimeout:
        return new ToolError({ kind: 'timeout', message, cause: thrown });
      case MCP_ERROR_CODES.invalidParams: {
        // the SDK's client raises -32602 for a *result* that fails its schema too: the server's defect, not the arguments'
        const bare = message.replace(/^(MCP error -?\d+: )+/, '');
        if (/^Invalid (tools\/call )?result\b|\bresult (does not match|is invalid)\b/i.test(bare)) {
          return new ToolError({
            kind: 'misconfigured',
            message: `the MCP server answered with a result that is not a valid tools/call result (${bare.slice(0, 300)}): the server is at fault, not the arguments`,
            cause: thrown,
          });
        }
        return new ToolError({
          kind: /\b(tool|unknown)\b.*\bnot found\b|\bunknown tool\b/i.test(message) ? 'not_found' : 'invalid_input',
          message: `MCP error -32602: ${bare}`,
          cause: thrown,
        });
      }
      case MCP_ERROR_CODES.methodNotFound:
        return new ToolError({ kind: 'misconfigured', message, cause: thrown });
      case MCP_ERROR_CODES.internalError:
        return new ToolError({ kind: 'server', message, cause: thrown });
      case MCP_ERROR_CODES.parseError:
      case MCP_ERROR_CODES.invalidRequest:
        return new ToolError({ kind: 'invalid_input', message, cause: thrown });
      default:
        return thrown;
    }
  }
  if (thrown instanceof Error && /^Not connected$/i.test(thrown.message)) {
    return new ToolError({ kind: 'server', message: 'the MCP server is not connected', cause: thrown });
  }
  return thrown;
}
