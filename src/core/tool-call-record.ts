import type { FailureKind } from '../ground/failure-cause.ts';
import type { ToolResult } from '../ground/tool-result.ts';

/** One execution of the tool inside a call. */
export interface AttemptRecord {
  attempt: number;
  durationMs: number;
  /** `success` or the failure code of this attempt. */
  outcome: 'success' | string;
  /** Wait scheduled after this attempt before the next, in milliseconds. */
  delayAfterMs?: number;
  /** Why the runtime did or did not retry after this attempt (`backoff`, `retry-after`, `attempts-exhausted`, ...). */
  retryReason?: string;
}

/**
 * The developer-facing record of one tool call: everything the envelope leaves out (stack, cause
 * chain, upstream status, attempts, normalisations), joined to it by `traceId`. Arguments are the
 * parsed, unredacted ones: redact before writing them anywhere (`sensitiveKeys` lists the tool's keys).
 */
export interface ToolCallRecord {
  result: ToolResult;
  traceId: string;
  callId: string;
  sessionId: string;
  runId: string | undefined;
  /** The name the model called. */
  requestedName: string;
  /** The registered tool that ran (differs when a spelling was resolved), or the requested name. */
  toolName: string;
  arguments: unknown;
  sensitiveKeys: readonly string[];
  normalisations: string[];
  attempts: AttemptRecord[];
  /** Set on failure. */
  error?: {
    /** The classifier's kind (`server`, `timeout`, `not_found` for an upstream 404, …); `unknown_tool` when no tool has the name asked for. */
    kind: FailureKind;
    status: number | null;
    /** The full error text (not truncated; may hold secrets: redact before logging). */
    message: string;
    name?: string;
    stack?: string;
    /** Messages of the `cause` chain, outermost first. */
    causes: string[];
  };
  /** The failure says the tool is broken for every caller (it fed the shared breaker). */
  misconfiguration: boolean;
  /** Epoch milliseconds. */
  startedAt: number;
  durationMs: number;
}
