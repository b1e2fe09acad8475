/**
 * Business-rule refusals of the airline tools. The original τ-bench tools answered them with a
 * plain `Error: …` text; here they are `ToolError`s whose message is that text without the
 * `Error: ` prefix, so toolrun classifies them and the replay can still rebuild the original text.
 */
import { ToolError } from '../../src/core/tool-error.ts';
import type { ToolErrorKind } from '../../src/ground/failure-cause.ts';

/** The kinds an airline refusal can have. */
export type AirlineRefusalKind = Extract<ToolErrorKind, 'not_found' | 'precondition' | 'invalid_input'>;

/**
 * A refusal: `kind` is `not_found` (unknown user, reservation, flight or payment method),
 * `precondition` (no seats, not available, not enough balance…) or `invalid_input` (the arguments
 * contradict each other, e.g. payments that do not add up). `code` is a stable machine code.
 */
export function airlineRefusal(kind: AirlineRefusalKind, code: string, message: string): ToolError {
  return new ToolError({ kind, code, message });
}

/** The original tool's reply text for a refusal: `Error: <message>`. */
export function formatAirlineRefusal(error: ToolError): string {
  return `Error: ${error.message}`;
}
