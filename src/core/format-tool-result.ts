import { safeGet, safeString } from './describe-thrown.ts';
import type { ToolResult } from '../ground/tool-result.ts';

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The longest `tool` attribute written, in characters. */
const MAX_ATTRIBUTE_CHARS = 256;

/**
 * The envelope as context text for text-only models:
 * `<tool_result tool="…" status="success|failed">{json}</tool_result>`. The JSON body has `<`
 * escaped as `\u003c` so a tool's output can never close the tag early.
 *
 * Never throws, for any value: an envelope JSON cannot hold (a BigInt, a cycle, a getter that
 * throws — only a hand-built one can, the runtime never returns one) is written with BigInts as
 * strings and repeated objects as `"[Circular]"`, or, when even that fails, as a failure body that
 * says the envelope could not be serialised.
 */
export function formatToolResult(result: ToolResult): string {
  const json = serialise(result).replace(/</g, '\\u003c');
  const toolName = safeString(safeGet(result, 'tool_name') ?? '');
  const status = safeGet(result, 'status') === 'success' ? 'success' : 'failed';
  return `<tool_result tool="${escapeAttribute(toolName.length > MAX_ATTRIBUTE_CHARS ? `${toolName.slice(0, MAX_ATTRIBUTE_CHARS)}…` : toolName)}" status="${status}">${json}</tool_result>`;
}

function serialise(result: unknown): string {
  try {
    const json = JSON.stringify(result);
    if (typeof json === 'string') return json;
  } catch {
    // below: a tolerant serialisation
  }
  try {
    const seen = new WeakSet<object>();
    const json = JSON.stringify(result, (_key, value: unknown) => {
      if (typeof value === 'bigint') return value.toString();
      if (typeof value === 'object' && value !== null) {
        if (seen.has(value)) return '[Circular]';
        seen.add(value);
      }
      return value;
    });
    if (typeof json === 'string') return json;
  } catch {
    // below: a fixed body
  }
  return JSON.stringify({
    status: 'failed',
    tool_name: safeString(safeGet(result, 'tool_name') ?? '').slice(0, MAX_ATTRIBUTE_CHARS),
    error: { type: 'logic', code: 'TOOL_EXCEPTION', message: 'The tool result could not be serialised', retryable: false },
  });
}
