import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { FailureCode } from '../failure-codes.ts';
import type { FieldError } from '../tool-result.ts';

/** A JSON Schema document (draft 2020-12 or draft-07), or a boolean schema. */
export type JsonSchema = { [key: string]: unknown } | boolean;

/** A tool's schema as a user declares it: JSON Schema, or a Standard Schema object (Zod 4, Valibot, ArkType...). */
export type ToolSchemaInput = JsonSchema | StandardSchemaV1;

/** How the validator may change arguments before checking them. */
export interface ValidateOptions {
  /**
   * `'none'` (default): `"5"` for an integer is rejected with a message naming the fix.
   * `'scalars'`: strings are converted where the schema asks for a number, integer or boolean, never into string fields.
   */
  coerce: 'none' | 'scalars';
}

/**
 * Outcome of validating one argument object.
 * - `ok: true`: `value` is what the tool receives (nulls for optional non-nullable properties removed,
 *   scalars coerced when asked); `normalisations` names each change, for the log.
 * - `ok: false`: a field-level, model-readable failure with an `invalid_parameter` code.
 */
export type ValidationResult =
  | { ok: true; value: unknown; normalisations: string[] }
  | { ok: false; code: FailureCode; message: string; detail: string; suggestion: string; fields: FieldError[] };

/** A compiled tool schema: what is advertised to the model and how arguments are checked. */
export interface CompiledToolSchema {
  /** The JSON Schema advertised to the model for function calling. */
  readonly jsonSchema: JsonSchema;
  /** Checks arguments. Never throws for any input value. */
  validate(value: unknown): ValidationResult | Promise<ValidationResult>;
}

/**
 * The port behind which the JSON Schema engine sits (Ajv by default, created lazily).
 * `compile` throws a `ToolrunError` with code `INVALID_SCHEMA` for a schema that cannot be compiled:
 * that is a programmer error, found when the runtime is created.
 */
export interface SchemaValidator {
  compile(schema: ToolSchemaInput, options: ValidateOptions): CompiledToolSchema;
}
