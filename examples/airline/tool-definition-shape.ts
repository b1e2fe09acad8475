/**
 * The airline tools' definition type: the core's `ToolDefinition` (`src/core/define-tool.ts`), with
 * a context whose `runId` may be left out, so the tools can also be called directly (tests) and not
 * only from an agent run.
 */
import { assertToolDefinition, type ToolContext, type ToolDefinition } from '../../src/core/define-tool.ts';

/** What a tool's `execute` receives besides its arguments: the core's `ToolContext`, `runId` optional. */
export interface AirlineToolContext extends Omit<ToolContext, 'runId'> {
  /** The agent run this call belongs to, when there is one. */
  runId?: string | undefined;
}

/** A toolrun tool definition of an airline tool (JSON Schema arguments, JSON result). */
export interface AirlineToolDefinition extends Omit<ToolDefinition<Record<string, unknown>>, 'execute'> {
  /** Calls the tool; resolves to its JSON result, rejects with a `ToolError` (or fetch's error). */
  execute: (args: Record<string, unknown>, context: AirlineToolContext) => Promise<unknown>;
}

/**
 * Declares an airline tool, checked as the core's `defineTool` checks a definition.
 *
 * @throws ToolrunError `INVALID_DEFINITION` for a malformed definition (a programmer error).
 */
export function defineAirlineTool(definition: AirlineToolDefinition): AirlineToolDefinition {
  assertToolDefinition(definition);
  return definition;
}
