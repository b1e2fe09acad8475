/**
 * What the adapter knows of the AI SDK's run-time conventions without importing `ai`: the global
 * symbols its schemas carry and the names of its errors. Two copies of `ai` in one tree (an app's
 * and a library's) share these, where `instanceof` and module-level symbols would not.
 */

/** The AI SDK's schema marker (`jsonSchema()` sets it; `asSchema` looks for it). */
const SCHEMA_SYMBOL = Symbol.for('vercel.ai.schema');
/** The validator marker `ai` 5 still checks (`asValidator`); `ai` 6 and 7 ignore it. */
const VALIDATOR_SYMBOL = Symbol.for('vercel.ai.validator');

/**
 * A schema object the AI SDK (5, 6 and 7) accepts as a tool's `inputSchema`: the JSON Schema as it
 * is advertised to the model, and no `validate`, so the SDK only parses the model's JSON and
 * toolrun validates it. The same object `jsonSchema(schema)` returns, built without importing `ai`.
 */
export function aiSdkJsonSchema(schema: unknown): Record<string | symbol, unknown> {
  return { [SCHEMA_SYMBOL]: true, [VALIDATOR_SYMBOL]: true, _type: undefined, jsonSchema: schema, validate: undefined };
}

/** The SDK's errors a tool-call repair function is called for. */
export type RepairableErrorName = 'AI_NoSuchToolError' | 'AI_InvalidToolInputError';

/**
 * Which of the two errors `repairToolCall` is called for `error` is: recognised by the SDK's
 * marker (`Symbol.for('vercel.ai.error.<name>')`) or by its `name`, never by `instanceof`.
 * `undefined` for anything else.
 */
export function repairableErrorName(error: unknown): RepairableErrorName | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  for (const name of ['AI_NoSuchToolError', 'AI_InvalidToolInputError'] as const) {
    try {
      if ((error as Record<symbol, unknown>)[Symbol.for(`vercel.ai.error.${name}`)] === true || (error as { name?: unknown }).name === name) return name;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
