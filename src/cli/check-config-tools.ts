import { createToolRuntime, ToolrunError, type ToolrunConfig, type ToolsInput } from '../index.ts';

/** One tool of a config, as the user wrote it: where it is (`tools[2]`, `tools.search`) and its name when it has one. */
interface ConfigTool {
  location: string;
  name: string | undefined;
  alone: ToolsInput;
}

function configTools(tools: ToolsInput): ConfigTool[] {
  if (Array.isArray(tools)) {
    return (tools as readonly unknown[]).map((tool, index) => ({ location: `tools[${index}]`, name: nameOf(tool), alone: [tool] as unknown as ToolsInput }));
  }
  if (typeof tools !== 'object' || tools === null) return [];
  return Object.entries(tools as Record<string, unknown>).map(([key, tool]) => ({
    location: `tools.${key}`,
    name: nameOf(tool) ?? key,
    alone: { [key]: tool } as unknown as ToolsInput,
  }));
}

function nameOf(tool: unknown): string | undefined {
  const name = typeof tool === 'object' && tool !== null ? (tool as { name?: unknown }).name : undefined;
  return typeof name === 'string' && name.length > 0 ? name : undefined;
}

function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const flat = text.replace(/\s*\n\s*/g, ' ');
  return flat.length > 400 ? `${flat.slice(0, 399)}…` : flat;
}

function codeOf(error: unknown): string {
  return ToolrunError.is(error) ? error.code : 'ERROR';
}

function tryBuild(config: ToolrunConfig, tools: ToolsInput): unknown {
  try {
    createToolRuntime({ ...config.runtimeOptions, tools });
    return undefined;
  } catch (error) {
    return error ?? new Error('the tool runtime could not be built');
  }
}

/**
 * Builds the tool runtime of `config` once (`createToolRuntime` with its `tools` and
 * `runtimeOptions`) and throws, naming the culprit, when it cannot be built: a tool whose
 * definition is malformed (`INVALID_DEFINITION`), whose input schema does not compile or uses a
 * pattern the schema engine cannot run (`INVALID_SCHEMA`), two tools with one name, or runtime
 * options that are invalid (`INVALID_OPTIONS`). Called by `toolrun worker` and `toolrun dlq
 * replay|drain` at start-up, before any store is opened or message consumed, so an invalid tool
 * fails the command once instead of failing every message. The runtime built here is discarded.
 *
 * @param source - where the config came from (its path), for the message.
 * @param nothingDone - what the message says was not done. @defaultValue `'no message was taken'`
 * @throws ToolrunError `INVALID_CONFIG` (exit code 2) with one line: the source, the tool (its
 * name and where it is in `tools`), the runtime's error code and its message.
 */
export function assertConfigToolsBuild(config: ToolrunConfig, source: string, nothingDone = 'no message was taken'): void {
  const whole = tryBuild(config, config.tools);
  if (whole === undefined) return;
  const optionsOnly = tryBuild(config, []);
  if (optionsOnly !== undefined) {
    throw new ToolrunError('INVALID_CONFIG', `${source}: \`runtimeOptions\` cannot build a tool runtime (${codeOf(optionsOnly)}): ${messageOf(optionsOnly)}`, {
      cause: optionsOnly,
    });
  }
  for (const tool of configTools(config.tools)) {
    const error = tryBuild(config, tool.alone);
    if (error === undefined) continue;
    const problem = messageOf(error).replace(/^Invalid tool definition(?: "[^"]*")?: /, '');
    const label = tool.name !== undefined ? `tool "${tool.name}" (${tool.location})` : `the tool at ${tool.location}`;
    throw new ToolrunError('INVALID_CONFIG', `${source}: ${label} is invalid (${codeOf(error)}): ${problem}; fix it and start again (${nothingDone})`, {
      cause: error,
    });
  }
  throw new ToolrunError(
    'INVALID_CONFIG',
    `${source}: \`tools\` cannot be registered (${codeOf(whole)}): ${messageOf(whole)}; fix it and start again (${nothingDone})`,
    { cause: whole },
  );
}
