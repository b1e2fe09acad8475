/**
 * Step 3 of a call: parse the arguments (a JSON text, repaired where that is unambiguous) and
 * validate them against the tool's schema. A failure feeds the session breaker with a fingerprint
 * of the arguments, so the same wrong call repeated opens it.
 */
import { fingerprintArguments } from '../../policies/fingerprint-arguments.ts';
import { parseArguments } from '../../schema/parse-arguments.ts';
import { findUndeclaredArguments } from '../../schema/undeclared-arguments.ts';
import type { RegisteredTool } from '../tool-registry.ts';
import { STEP_PASSED, stepFailed, type CallState, type PipelineParts, type StepOutcome } from './call-state.ts';

/**
 * How deep the arguments may nest (objects and arrays). Deeper values are refused before any
 * recursive walk (the validator, the redactor, a log) could exhaust the stack: no real schema
 * nests this far.
 */
export const MAX_ARGUMENT_DEPTH = 256;

/**
 * Whether `value` nests objects or arrays deeper than `limit`. Recursive, but never deeper than
 * `limit + 1` frames: it stops at the first branch past the limit, so the stack stays small.
 */
function nestsDeeperThan(value: unknown, limit: number, depth = 1): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (depth > limit) return true;
  if (Array.isArray(value)) {
    for (const child of value) if (typeof child === 'object' && child !== null && nestsDeeperThan(child, limit, depth + 1)) return true;
    return false;
  }
  for (const key in value) {
    const child = (value as Record<string, unknown>)[key];
    if (typeof child === 'object' && child !== null && nestsDeeperThan(child, limit, depth + 1)) return true;
  }
  return false;
}

/** Parses and validates the call's arguments; on success `call.args` holds the validated value. */
export function validateStep(parts: PipelineParts, call: CallState, tool: RegisteredTool): StepOutcome<void> | Promise<StepOutcome<void>> {
  const { sessionBreakers } = parts;
  const raw = call.input.args;
  let value: unknown;
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    value = raw; // an object (most calls): what parseArguments would hand on unchanged
  } else {
    const parsed = parseArguments(raw, parts.parseOptions);
    if (!parsed.ok) {
      sessionBreakers?.recordFailure(call.sessionId, call.toolName, { kind: 'invalid-arguments', fingerprint: fingerprintArguments(raw) });
      return stepFailed(parsed.failure);
    }
    if (parsed.normalisations.length > 0) call.normalisations.push(...parsed.normalisations);
    value = parsed.value;
  }
  if (nestsDeeperThan(value, MAX_ARGUMENT_DEPTH)) {
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
  call.args = value;
  if (!tool.validator) return STEP_PASSED;
  // A synchronous validator's result is handed on as it is: the runtime starts the tool on a later
  // microtask either way, so a tool never starts in the same synchronous run as its caller (a tool
  // that calls the runtime on itself recurses through the microtask queue, not the stack).
  const validation = tool.validator.validate(value);
  return validation instanceof Promise ? validation.then((result) => validated(parts, call, value, result)) : validated(parts, call, value, validation);
}

/** The outcome of a validation result. */
function validated(
  parts: PipelineParts,
  call: CallState,
  value: unknown,
  validation: Awaited<ReturnType<NonNullable<RegisteredTool['validator']>['validate']>>,
): StepOutcome<void> {
  if (!validation.ok) {
    parts.sessionBreakers?.recordFailure(call.sessionId, call.toolName, { kind: 'invalid-arguments', fingerprint: fingerprintArguments(value) });
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
  if (validation.normalisations.length > 0) call.normalisations.push(...validation.normalisations);
  call.args = validation.value;
  const tool = call.tool;
  if (tool !== undefined && tool.definition.undeclaredArguments !== 'ignore') {
    // read on the arguments as sent: a Standard Schema may have stripped the key already
    const warnings = findUndeclaredArguments(tool.spec.inputSchema, value);
    if (warnings.length > 0) call.warnings = warnings.map((warning) => ({ ...warning, message: parts.modelText(warning.message) }));
  }
  return STEP_PASSED;
}
