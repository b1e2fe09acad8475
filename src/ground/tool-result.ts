import type { FailureCode, FailureType } from './failure-codes.ts';

/**
 * One field-level validation problem, addressed by a JSON Pointer.
 *
 * @see RFC 6901 (JSON Pointer)
 */
export interface FieldError {
  /** JSON Pointer to the offending value, `""` for the whole argument object, e.g. `/passengers/0/dob`. */
  path: string;
  /** What is wrong: `required`, `type`, `enum`, `format`, `pattern`, `range`, `length`, `unknown`, `const`, `alternatives`, `other`. */
  problem: string;
  /** What was expected, with an example where one helps (`YYYY-MM-DD, e.g. 2024-01-15`). */
  expected?: string;
  /** A bounded preview of what was received (absent for a missing field). */
  received?: string;
  /** One sentence for the model and a person. */
  message?: string;
}

/** The `error` member of a failed envelope (wire format: snake_case). */
export interface ToolFailureError {
  type: FailureType;
  code: FailureCode;
  /** Short statement of what failed. */
  message: string;
  /** Bounded, sanitised detail: never a stack, host path or secret. */
  detail: string;
  /** Whether calling again (after fixing what `suggestion` says) can help. */
  retryable: boolean;
  /** Natural-language advice for the model. */
  suggestion: string;
  /** Field-level problems, at most the runtime's `maxFieldErrors` (default 20). */
  fields?: FieldError[];
  /** How many more field-level problems there were than `fields` lists (absent when none were left out). */
  omitted_fields?: number;
  /** Server-requested wait that did not fit the remaining budget, in milliseconds. */
  retry_after_ms?: number;
  /** For `TOOL_NOT_FOUND`: the registered tool names (at most 50). */
  available_tools?: string[];
  /** For `TOOL_NOT_FOUND`: the closest registered name, when one is close enough. */
  closest_tool?: string;
  /** Tools declared as fallbacks for the failed tool. */
  fallbacks?: string[];
}

/** The members every envelope has, successful or failed (wire format: snake_case). */
export interface EnvelopeBase {
  /** The registered tool's name (or, for `TOOL_NOT_FOUND`, the requested name, bounded). */
  tool_name: string;
  /** The model's id of this call (or one toolrun generated). */
  call_id: string;
  /** Wall time of the whole call, retries and waits included, in milliseconds. */
  duration_ms: number;
  /** How many times the tool itself was executed (0 when it never ran). */
  attempts: number;
  /** Joins this envelope to the developer log record. */
  trace_id: string;
}

/**
 * Something the model should know about a call that succeeded (wire format: snake_case). Today one
 * kind: `UNDECLARED_ARGUMENT`, an argument the tool's schema lets through without declaring it
 * (the schema does not set `additionalProperties`), so the tool ran without reading its value.
 */
export interface ToolWarning {
  /** What kind of warning: `UNDECLARED_ARGUMENT` (the only one today; more may be added). */
  code: 'UNDECLARED_ARGUMENT';
  /** JSON Pointer to the argument, e.g. `/querry` or `/filter/stauts`. */
  path: string;
  /** The declared parameter at that level the key most resembles, when one is close (`query`). */
  closest?: string;
  /** One sentence for the model: the key (control characters escaped, bounded) and what to send instead. */
  message: string;
}

/** A successful tool call. */
export interface ToolSuccess extends EnvelopeBase {
  status: 'success';
  data: unknown;
  /** Present and true when `data` was cut to the configured output bound. */
  truncated?: boolean;
  /** What the model should know although the call succeeded (at most 10); absent when there is nothing. */
  warnings?: ToolWarning[];
}

/** A failed tool call: a value, never an exception. */
export interface ToolFailure extends EnvelopeBase {
  status: 'failed';
  error: ToolFailureError;
}

/**
 * The one result shape of every tool call, JSON-serialisable: a {@link ToolSuccess} or a
 * {@link ToolFailure}, told apart by `status`. It is a wire format: its members are stable.
 */
export type ToolResult = ToolSuccess | ToolFailure;

/** Internal result passed between pipeline layers: failures are data. */
export type Outcome<T, F = ToolFailureError> = { ok: true; value: T } | { ok: false; failure: F };
