/**
 * The shape of a toolrun tool definition as the airline tools use it, kept local so this example
 * does not depend on the core while the core is being written. It is structurally a subset of
 * `ToolDefinition` from `src/core/define-tool.ts`: to switch, replace the body of
 * {@link defineAirlineTool} with `defineTool` and the interfaces with the core's types.
 */

/** What a tool's `execute` receives besides its arguments (the core's `ToolContext`). */
export interface AirlineToolContext {
  /** Aborted when the attempt times out or the call is cancelled: the HTTP request is aborted with it. */
  signal: AbortSignal;
  /** 1-based attempt number of this call. */
  attempt: number;
  callId: string;
  sessionId: string;
  /** The agent run this call belongs to, when there is one. */
  runId?: string | undefined;
  /** Stable across the retries of one call: sent as the `idempotency-key` header. */
  idempotencyKey: string;
}

/** A tool definition (the core's `ToolDefinition` fields the airline tools use). */
export interface AirlineToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments (τ-bench's OpenAI function `parameters`). */
  inputSchema: Record<string, unknown>;
  execute: (args: Record<string, unknown>, context: AirlineToolContext) => Promise<unknown>;
  /** Safe to repeat after an ambiguous failure. */
  idempotent?: boolean;
  /** Per-attempt timeout in milliseconds. */
  timeoutMs?: number;
  /** Tools to use instead when this one fails for good. */
  fallbacks?: string[];
  /** Argument keys whose values are redacted in logs and dead-letter entries. */
  sensitive?: string[];
}

/** Declares an airline tool; the swap point for the core's `defineTool`. */
export function defineAirlineTool(definition: AirlineToolDefinition): AirlineToolDefinition {
  return definition;
}
