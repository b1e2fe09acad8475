/**
 * The 14 airline tool schemas of τ-bench (`tau-bench/tools.airline.json`, OpenAI function format),
 * as advertised to the model.
 */
import { readSharedJson } from '../shared-data.ts';

/** One tool's advertised name, description and JSON Schema of its arguments. */
export interface AirlineToolSchema {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

interface OpenAiFunctionTool {
  type: 'function';
  function: AirlineToolSchema;
}

let cachedSchemas: Map<string, AirlineToolSchema> | undefined;

/**
 * The schemas by tool name, in file order (read once).
 *
 * @throws Error naming the missing file when the shared data is absent.
 */
export function loadAirlineToolSchemas(): ReadonlyMap<string, AirlineToolSchema> {
  cachedSchemas ??= new Map(readSharedJson<OpenAiFunctionTool[]>('tau-bench', 'tools.airline.json').map((tool) => [tool.function.name, tool.function]));
  return cachedSchemas;
}
