/**
 * Step 1 of a call: find the tool. An exact name, else an equivalent spelling the registry resolves
 * unambiguously (`math_factorial` for `math.factorial`); else `TOOL_NOT_FOUND` with the closest
 * name, or `TOO_MANY_FAILURES` once the session breaker has seen that unknown name too often.
 */
import { boundToolName } from '../bound-envelope.ts';
import { redactBounded } from '../build-failure.ts';
import { truncateUtf8 } from '../../ground/utf8.ts';
import { describeToolNotFound, resolveToolName } from '../resolve-tool-name.ts';
import type { RegisteredTool } from '../tool-registry.ts';
import { stepFailed, type CallState, type PipelineParts, type StepOutcome } from './call-state.ts';

/** At most this many tool names are listed in a `TOOL_NOT_FOUND` envelope. */
const LISTED_TOOLS = 50;

/** Resolves the call's tool; on success `call.tool` and `call.toolName` are set. */
export function resolveStep(parts: PipelineParts, call: CallState): StepOutcome<RegisteredTool> {
  const { registry, redactor, sessionBreakers } = parts;
  const requestedName = call.requestedName;
  // A name that is not a string (an object whose toString says "echo") names no tool: it is never resolved.
  const exact = typeof call.input.name === 'string' ? registry.get(requestedName) : undefined;
  if (exact) {
    call.tool = exact;
    return { ok: true, value: exact };
  }
  // the raw arguments weigh the suggestions (they never make another tool run)
  const resolution = resolveToolName(requestedName, call.args, registry);
  if (parts.resolveToolNames && typeof call.input.name === 'string' && resolution.match !== undefined) {
    const resolved = registry.get(resolution.match);
    if (resolved) {
      call.normalisations.push(`tool-name-resolved:${truncateUtf8(requestedName, 256)}->${resolution.match}`);
      call.toolName = resolution.match;
      call.tool = resolved;
      return { ok: true, value: resolved };
    }
  }
  // `TOOL_NOT_FOUND`, counted by the session breaker under the name the model sent. The
  // envelope's tool_name is model text like any: redacted (a key sent as a name is masked) and bounded.
  call.toolName = redactBounded(redactor, requestedName, 128);
  const closest = resolution.closest;
  const shownName = boundToolName(redactor, requestedName);
  const names = registry.names;
  const listed = names.slice(0, LISTED_TOOLS);
  const available = `${listed.join(', ')}${names.length > listed.length ? `, … (${names.length - listed.length} more)` : ''}`;
  const closestFields = closest !== undefined ? { closestTool: closest } : {};
  if (sessionBreakers && sessionBreakers.check(call.sessionId, requestedName).state === 'open') {
    call.errorRecord = {
      kind: 'unknown_tool',
      status: null,
      message: `Unknown tool ${truncateUtf8(requestedName, 256)}, called too many times in this session`,
      causes: [],
    };
    return stepFailed({
      code: 'TOO_MANY_FAILURES',
      message: `There is no tool named "${shownName}", and it was called too many times in this session`,
      detail: `Available tools: ${available}.`,
      suggestion: `Stop calling "${shownName}": it does not exist. ${closest ? `Call "${closest}" if it does what you need, or another of the available tools` : 'Call one of the available tools'}, or answer the user with what you have.`,
      availableTools: [...listed],
      ...closestFields,
    });
  }
  sessionBreakers?.recordFailure(call.sessionId, requestedName, { kind: 'counted' });
  call.errorRecord = { kind: 'unknown_tool', status: null, message: `Unknown tool ${truncateUtf8(requestedName, 256)}`, causes: [] };
  return stepFailed({
    code: 'TOOL_NOT_FOUND',
    ...describeToolNotFound(shownName, resolution, available),
    availableTools: [...listed],
    ...closestFields,
  });
}
