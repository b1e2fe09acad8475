import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { RetryPolicyOverride } from '../policies/retry-policy.ts';
import type { ToolSchemaInput } from '../ground/ports/schema-validator.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { findSchemaCycle } from '../schema/schema-shape.ts';

/** What a tool's `execute` receives besides its arguments. */
export interface ToolContext {
  /** Aborted when the attempt times out, the call's budget runs out or the caller cancels: stop the work. */
  signal: AbortSignal;
  /** 1-based attempt number of this call. */
  attempt: number;
  callId: string;
  sessionId: string;
  /** The agent run this call belongs to, when there is one. */
  runId: string | undefined;
  /**
   * Stable across the retries of one call (and across a replay of the same run step): pass it to
   * the upstream API so a repeated write is applied once.
   */
  idempotencyKey: string;
}

/**
 * The type of `args` a tool receives for an input schema: a Standard Schema's output type; for a
 * JSON Schema written `as const` with `type: 'object'`, the type it describes (by json-schema-to-ts's
 * `FromSchema`: required properties required, enums as unions, `additionalProperties: false` closed);
 * otherwise (a schema built at run time) a plain object.
 */
export type InferArgs<S> = S extends StandardSchemaV1
  ? StandardSchemaV1.InferOutput<S>
  : S extends { readonly type: 'object' }
    ? S extends JSONSchema
      ? FromSchema<S>
      : Record<string, unknown>
    : Record<string, unknown>;

/**
 * A tool as toolrun knows it. Create one with {@link defineTool}.
 *
 * `Args` is inferred from a Standard Schema `inputSchema`; with JSON Schema it is a plain record.
 */
// `any` by default so definitions with different argument types fit in one `tools` array (execute is contravariant).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface ToolDefinition<Args = any, Result = unknown> {
  /** Registry name, `^[A-Za-z0-9_.:/-]{1,128}$`. */
  name: string;
  /** What the tool does, advertised to the model. */
  description: string;
  /** The schema advertised to the model (JSON Schema 2020-12 / draft-07, or a Standard Schema). */
  inputSchema: ToolSchemaInput;
  /** A stricter schema the runtime validates against instead (formats, patterns, ranges). */
  strictSchema?: ToolSchemaInput;
  /** Does the work. Throw a `ToolError` to say how it failed; anything else thrown is classified. */
  execute: (args: Args, context: ToolContext) => Promise<Result> | Result;
  /** Retry policy overrides for this tool. */
  retry?: RetryPolicyOverride;
  /**
   * Safe to repeat after an ambiguous failure (a timeout or a connection reset mid-call).
   * Reads are; writes are only when they honour `context.idempotencyKey`.
   * @defaultValue false
   */
  idempotent?: boolean;
  /** Per-attempt timeout in milliseconds, at most 2_147_483_647 (the longest timer). @defaultValue the runtime's `defaultTimeoutMs` */
  timeoutMs?: number;
  /** Tools to use instead when this one fails for good; named in the failure's suggestion. */
  fallbacks?: string[];
  /** Argument keys whose values are redacted in logs and dead-letter entries (wildcards allowed). */
  sensitive?: string[];
  /** Scalar coercion for this tool's arguments. @defaultValue the runtime's `coerce` (`'none'`) */
  coerce?: 'none' | 'scalars';
  /**
   * What the success envelope says of an argument the schema lets through without declaring it (an
   * object schema that lists `properties` and leaves `additionalProperties` unset): `'warn'` adds a
   * `warnings` entry naming the key and the closest declared one; `'ignore'` says nothing (a tool
   * that reads keys it does not declare). A schema that sets `additionalProperties: false` refuses
   * such a call either way.
   * @defaultValue 'warn'
   */
  undeclaredArguments?: 'warn' | 'ignore';
}

const NAME_PATTERN = /^[A-Za-z0-9_.:/-]{1,128}$/;

/**
 * The longest wait a JavaScript timer holds, in milliseconds (2^31 − 1, about 24.8 days): Node
 * fires a longer `setTimeout` at once (with a `TimeoutOverflowWarning`), browsers likewise. Every
 * timeout, budget and retry wait toolrun accepts is at most this.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Declares a tool. Checks the definition and returns it unchanged (typed).
 *
 * @throws ToolrunError `INVALID_DEFINITION` when the name, description, schema or `execute` is missing or malformed
 *   (an `inputSchema` of `false`, or one whose objects refer to themselves), or a numeric option is not a positive finite number (`timeoutMs` at most 2_147_483_647, the longest timer).
 */
export function defineTool<S extends ToolSchemaInput, Result = unknown>(
  definition: ToolDefinition<InferArgs<S>, Result> & { inputSchema: S },
): ToolDefinition<InferArgs<S>, Result> {
  assertToolDefinition(definition);
  return definition;
}

/**
 * Throws `ToolrunError('INVALID_DEFINITION')` unless `value` is a well-formed tool definition.
 */
export function assertToolDefinition(value: unknown): asserts value is ToolDefinition {
  const fail = (problem: string): never => {
    const name = typeof value === 'object' && value !== null ? (value as { name?: unknown }).name : undefined;
    throw new ToolrunError('INVALID_DEFINITION', `Invalid tool definition${typeof name === 'string' ? ` "${name}"` : ''}: ${problem}`);
  };
  if (typeof value !== 'object' || value === null) return fail('expected an object');
  const definition = value as Partial<ToolDefinition>;
  if (typeof definition.name !== 'string' || !NAME_PATTERN.test(definition.name)) {
    fail(`name must match ${NAME_PATTERN.source}`);
  }
  if (typeof definition.description !== 'string') fail('description must be a string');
  const schema = definition.inputSchema as unknown;
  if (typeof schema !== 'boolean' && (typeof schema !== 'object' || schema === null)) fail('inputSchema must be a JSON Schema or a Standard Schema');
  if (schema === false) fail("inputSchema is false, which accepts no arguments at all: a tool without arguments takes { type: 'object', properties: {} }");
  if (typeof schema === 'object' && schema !== null && !('~standard' in schema)) {
    const cycle = findSchemaCycle(schema);
    if (cycle !== undefined) fail(`inputSchema refers to itself at ${cycle} (a cycle of objects, which is not JSON): recurse with "$ref"`);
  }
  if (typeof definition.execute !== 'function') fail('execute must be a function');
  if (definition.timeoutMs !== undefined && !(typeof definition.timeoutMs === 'number' && Number.isFinite(definition.timeoutMs) && definition.timeoutMs > 0)) {
    fail('timeoutMs must be a positive number of milliseconds');
  }
  if (definition.timeoutMs !== undefined && definition.timeoutMs > MAX_TIMER_MS) {
    fail(
      `timeoutMs must be at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest timer JavaScript runtimes hold; longer ones fire at once), received ${definition.timeoutMs}`,
    );
  }
  if (definition.fallbacks !== undefined && !(Array.isArray(definition.fallbacks) && definition.fallbacks.every((name) => typeof name === 'string'))) {
    fail('fallbacks must be an array of tool names');
  }
  if (definition.sensitive !== undefined && !(Array.isArray(definition.sensitive) && definition.sensitive.every((key) => typeof key === 'string'))) {
    fail('sensitive must be an array of property names');
  }
  if (definition.undeclaredArguments !== undefined && definition.undeclaredArguments !== 'warn' && definition.undeclaredArguments !== 'ignore') {
    fail(`undeclaredArguments must be 'warn' or 'ignore'`);
  }
}
