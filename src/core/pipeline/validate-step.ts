/**
 * Step 3 of a call: parse the arguments (a JSON text, repaired where that is unambiguous) and
 * validate them against the tool's schema. A failure feeds the session breaker with a fingerprint
 * of the arguments, so the same wrong call repeated opens it.
 */
import { fingerprintArguments } from '../../policies/fingerprint-arguments.ts';
import { parseArguments } from '../../schema/parse-arguments.ts';
import type { RegisteredTool } from '../tool-registry.ts';
import { stepFailed, type CallState, type PipelineParts, type StepOutcome } from './call-state.ts';

/**
 * How deep the arguments may nest (objects and arrays). Deeper values are refused before any
 * recursive walk (the validator, the redactor, a log) could exhaust the stack: no real schema
 * nests this far.
 */
export const MAX_ARGUMENT_DEPTH = 256;

/** Whether `value` nests objects or arrays deeper than `limit`, found without recursion (stops at the first too-deep branch). */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > limit) return true;
    const children = Array.isArray(node) ? node : Object.values(node as object);
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

/** Parses and validates the call's arguments; on success `call.args` holds the validated value. */
export async function validateStep(parts: PipelineParts, call: CallState, tool: RegisteredTool): Promise<StepOutcome<unknown>> {
  const { sessionBreakers } = parts;
  const raw = call.input.args;
  const parsed = parseArguments(raw, parts.parseOptions);
  if (!parsed.ok) {
    sessionBreakers?.recordFailure(call.sessionId, call.toolName, { kind: 'invalid-arguments', fingerprint: fingerprintArguments(raw) });
    return stepFailed(parsed.failure);
  }
  if (nestsDeeperThan(parsed.value, MAX_ARGUMENT_DEPTH)) {
    sessionBreakers?.recordFailure(call.sessionId, call.toolName, { kind: 'counted' });
    // the developer record keeps the raw text, never a value no recursive walk can read safely
    call.args = typeof raw === 'string' ? raw : undefined;
    return stepFailed({
      code: 'MALFORMED_ARGUMENTS',
      message: `The arguments are nested more than ${MAX_ARGUMENT_DEPTH} levels deep`,
      detail: `Objects and arrays inside the arguments may nest at most ${MAX_ARGUMENT_DEPTH} levels.`,
      suggestion: 'Send the arguments as the flat JSON object the tool describes, and call again.',
    });
  }
  call.normalisations.push(...parsed.normalisations);
  call.args = parsed.value;
  if (!tool.validator) {
    // A tool never starts in the same synchronous run as its caller: a tool that calls the
    // runtime on itself recurses through the microtask queue, not the stack.
    await undefined;
    return { ok: true, value: call.args };
  }
  const validation = await tool.validator.validate(parsed.value);
  if (!validation.ok) {
    sessionBreakers?.recordFailure(call.sessionId, call.toolName, { kind: 'invalid-arguments', fingerprint: fingerprintArguments(parsed.value) });
    // A validator may report problems it did not describe (the Ajv one describes at most 1,000).
    const omittedFields = 'omittedFields' in validation && typeof validation.omittedFields === 'number' ? validation.omittedFields : 0;
    return stepFailed({
      code: validation.code,
      message: validation.message,
      detail: validation.detail,
      suggestion: validation.suggestion,
      fields: validation.fields,
      omittedFields,
    });
  }
  call.normalisations.push(...validation.normalisations);
  call.args = validation.value;
  return { ok: true, value: call.args };
}
