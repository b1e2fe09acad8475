import { resolveRetryPolicy, type RetryPolicy } from '../policies/retry-policy.ts';
import { assertToolDefinition, type ToolContext, type ToolDefinition } from './define-tool.ts';
import type { CompiledToolSchema, JsonSchema, SchemaValidator } from '../ground/ports/schema-validator.ts';
import { MAX_TIMER_MS } from './define-tool.ts';
import { createToolNameResolver, type ToolNameResolution } from './resolve-tool-name.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';

/** A plain async function registered under its record key: no schema, arguments pass through. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a plain function declares its own argument type
export type PlainToolFunction = (args: any, context: ToolContext) => unknown;

/** What `createToolRuntime({ tools })` accepts. */
export type ToolsInput = readonly ToolDefinition[] | Readonly<Record<string, ToolDefinition | PlainToolFunction>>;

/** A tool as advertised to a model for function calling. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  inputSchema: JsonSchema;
}

/** A tool with everything the pipeline needs precomputed. */
export interface RegisteredTool {
  definition: ToolDefinition;
  /** `undefined` for a plain function: arguments pass through unvalidated. */
  validator: CompiledToolSchema | undefined;
  spec: ToolSpec;
  retry: RetryPolicy;
  idempotent: boolean;
}

/** The registry of a runtime. */
export interface ToolRegistry {
  get(name: string): RegisteredTool | undefined;
  resolve(name: string): ToolNameResolution;
  readonly names: readonly string[];
  readonly specs: readonly ToolSpec[];
}

const PASS_THROUGH_SCHEMA: JsonSchema = { type: 'object', additionalProperties: true };

function normaliseTools(tools: ToolsInput): Array<{ definition: ToolDefinition; plain: boolean }> {
  if (Array.isArray(tools)) return (tools as readonly ToolDefinition[]).map((definition) => ({ definition, plain: false }));
  if (typeof tools !== 'object' || tools === null)
    throw new ToolrunError('INVALID_DEFINITION', 'tools must be an array of tool definitions or a record of definitions and functions');
  return Object.entries(tools as Record<string, ToolDefinition | PlainToolFunction>).map(([key, value]) => {
    if (typeof value === 'function') {
      const execute = value;
      return { definition: { name: key, description: '', inputSchema: PASS_THROUGH_SCHEMA, execute: (args, context) => execute(args, context) }, plain: true };
    }
    if (typeof value === 'object' && value !== null && value.name === undefined) return { definition: { ...value, name: key }, plain: false };
    return { definition: value, plain: false };
  });
}

/**
 * Throws `ToolrunError(code)` unless every wait of a retry policy (`minDelayMs`, and the backoff's
 * `baseDelayMs`, `maxDelayMs`, `jitterMs`) is at most `MAX_TIMER_MS`: a longer timer fires at once.
 * `owner` starts the message.
 */
export function assertRetryDelaysFitTimers(policy: RetryPolicy, code: 'INVALID_OPTIONS' | 'INVALID_DEFINITION', owner: string): void {
  const delays: Array<[string, number]> = [
    ['minDelayMs', policy.minDelayMs],
    ['backoff.baseDelayMs', policy.backoff.baseDelayMs],
    ['backoff.maxDelayMs', policy.backoff.maxDelayMs],
    ['backoff.jitterMs', policy.backoff.jitterMs],
  ];
  for (const [name, ms] of delays) {
    if (ms > MAX_TIMER_MS)
      throw new ToolrunError(code, `${owner}: retry.${name} must be at most ${MAX_TIMER_MS} ms (the longest timer JavaScript runtimes hold), received ${ms}`);
  }
}

/**
 * Builds the registry: checks every definition, compiles its schema once, resolves its retry policy.
 *
 * @throws ToolrunError `INVALID_DEFINITION` for a malformed or duplicate tool, or a retry wait above `MAX_TIMER_MS`;
 *   `INVALID_SCHEMA` for a schema that does not compile.
 */
export function createToolRegistry(tools: ToolsInput, options: { validator: SchemaValidator; retry: RetryPolicy; coerce: 'none' | 'scalars' }): ToolRegistry {
  const byName = new Map<string, RegisteredTool>();
  for (const { definition, plain } of normaliseTools(tools)) {
    assertToolDefinition(definition);
    if (byName.has(definition.name)) throw new ToolrunError('INVALID_DEFINITION', `Two tools are named "${definition.name}"`);
    const coerce = definition.coerce ?? options.coerce;
    const advertised = plain ? undefined : options.validator.compile(definition.inputSchema, { coerce });
    const validator = plain ? undefined : definition.strictSchema !== undefined ? options.validator.compile(definition.strictSchema, { coerce }) : advertised;
    const retry = resolveRetryPolicy(options.retry, definition.retry);
    assertRetryDelaysFitTimers(retry, 'INVALID_DEFINITION', `Invalid tool definition "${definition.name}"`);
    byName.set(definition.name, {
      definition,
      validator,
      spec: { name: definition.name, description: definition.description, inputSchema: advertised?.jsonSchema ?? PASS_THROUGH_SCHEMA },
      retry,
      idempotent: definition.idempotent ?? false,
    });
  }
  const names = [...byName.keys()];
  const resolver = createToolNameResolver(names);
  const specs = [...byName.values()].map((tool) => tool.spec);
  return { get: (name) => byName.get(name), resolve: resolver, names, specs };
}
