import type { ToolResult } from './tool-result.ts';

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The envelope as context text for text-only models (SPEC.md §1.7):
 * `<tool_result tool="…" status="success|failed">{json}</tool_result>`. The JSON body has `<`
 * escaped as `\u003c` so a tool's output can never close the tag early.
 */
export function formatToolResult(result: ToolResult): string {
  const json = JSON.stringify(result).replace(/</g, '\\u003c');
  return `<tool_result tool="${escapeAttribute(result.tool_name)}" status="${result.status}">${json}</tool_result>`;
}
