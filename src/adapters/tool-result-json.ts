import type { ToolResult } from '../ground/tool-result.ts';

/** The envelope as JSON, as the agent loop gives it to the model (a fixed failure body if it cannot be serialised). */
export function toolResultJson(result: ToolResult): string {
  try {
    const json = JSON.stringify(result);
    if (typeof json === 'string') return json;
  } catch {
    // below
  }
  return JSON.stringify({
    status: 'failed',
    tool_name: String(result.tool_name),
    call_id: String(result.call_id),
    error: { type: 'logic', code: 'TOOL_EXCEPTION', message: 'The tool result could not be serialised', retryable: false },
  });
}
