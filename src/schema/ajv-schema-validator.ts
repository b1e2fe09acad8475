import type { AnySchema, AnyValidateFunction, ErrorObject } from 'ajv/dist/core.js';
import { Ajv } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormatsModule from 'ajv-formats';
import type { CompiledToolSchema, JsonSchema, SchemaValidator, ValidateOptions, ValidationResult } from '../ground/ports/schema-validator.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { canGenerateCode, compileJsonSchemaWithoutCodeGeneration } from './cfworker-schema-validator.ts';
import { findClosestName } from './closest-name.ts';
import { ANNOTATION_FORMATS, findUnknownFormat, SPECIFICATION_FORMATS } from './schema-shape.ts';
import { describeAjvErrors } from './describe-ajv-errors.ts';
import { chooseDialect, type JsonSchemaDialect } from './json-schema-dialect.ts';
import { linearRegExpEngine } from './linear-regexp.ts';
import { normaliseArguments, normalisesNothing } from './normalise-arguments.ts';
import { truncateText } from './preview.ts';
import { cachingSchemaValidator, type StandardSchemaToJsonSchema } from './standard-schema.ts';
import { isBoundedUrl } from './string-formats.ts';
import { validationCrashed } from './validation-crashed.ts';

/** Options of {@link createAjvSchemaValidator}. */
export interface AjvSchemaValidatorOptions {
  /** Dialect for a schema without `$schema`. @defaultValue 'draft-2020-12' */
  defaultDialect?: JsonSchemaDialect;
  /**
   * Remove `null` sent for an optional property whose schema does not accept `null`, before
   * validation (recorded as `null-as-absent:/path`). Turn off for strict JSON Schema semantics.
   * @defaultValue true
   */
  nullAsAbsent?: boolean;
  /** Converts a Standard Schema object without the Standard JSON Schema extension (e.g. Valibot) to JSON Schema. */
  toJsonSchema?: StandardSchemaToJsonSchema;
  /**
   * Called once when the Ajv instance of a dialect is created (lazily, on first use): add remote
   * schemas (`ajv.addSchema(schema, uri)`), formats or keywords.
   */
  configureAjv?: (ajv: AjvInstance, dialect: JsonSchemaDialect) => void;
  /**
   * Which engine compiles JSON Schemas:
   * - `'ajv'`: Ajv, which generates code (`new Function`);
   * - `'cfworker'`: the interpreting `@cfworker/json-schema`, which generates none (see
   *   `createCfworkerSchemaValidator` for what it matches and where it differs); `configureAjv` does
   *   not apply to it;
   * - `'auto'`: Ajv while the runtime allows code generation from strings, the interpreter from the
   *   first compile where it does not (Cloudflare Workers, a strict Content Security Policy, Node
   *   with `--disallow-code-generation-from-strings`). The probe runs at each compile, since a Worker
   *   may allow code generation while its module loads and forbid it once it serves requests; a
   *   schema compiled by Ajv keeps working after that.
   * @defaultValue 'auto'
   */
  jsonSchemaEngine?: 'auto' | 'ajv' | 'cfworker';
}

/** The Ajv API toolrun uses; every dialect's class has it. */
export type AjvInstance = Ajv;

// ajv-formats is CommonJS with `module.exports = plugin` and `exports.default = plugin`.
const addFormats = ((ajvFormatsModule as unknown as { default?: unknown }).default ?? ajvFormatsModule) as (ajv: AjvInstance) => AjvInstance;

/**
 * Creates the default {@link SchemaValidator}: JSON Schema through Ajv, Standard Schema objects
 * through their own `validate`.
 *
 * - One Ajv instance per dialect, created lazily on first use: `Ajv2020` for 2020-12 and for
 *   schemas without `$schema` (see `defaultDialect`), `Ajv2019` for 2019-09, `Ajv` for draft-07
 *   (draft-04/06 schemas run as draft-07 with their `$schema` removed). All with `allErrors: true`,
 *   `strict: false`, `verbose: true`, `ownProperties: true` and ajv-formats (date, date-time, time, email, uri, uuid, ...).
 * - `pattern`, `patternProperties` and `propertyNames` patterns run in time linear in the string
 *   (see `compileLinearRegExp`): a pattern with lookaround or a backreference is refused at compile
 *   time (`INVALID_SCHEMA`). The `url` format checks at most 2,083
 *   characters (a longer string is not a valid `url`); the other formats are linear.
 * - Compiled schemas are cached by schema object identity and `coerce` mode (WeakMap).
 * - `compile` throws `ToolrunError` `INVALID_SCHEMA` for a schema that does not compile (or is
 *   neither an object, a boolean nor a Standard Schema), or whose `format` is not a string or is
 *   a misspelling (within the edit distance of `findClosestName`) of a known one — ajv-formats',
 *   `url`, those added with `configureAjv`, the specification's, the OpenAPI annotations — since
 *   Ajv would check nothing for it. Other unknown formats are annotations, as the specification
 *   says.
 * - `validate` works on a copy: `null` for optional non-nullable properties removed, scalars
 *   coerced with `coerce: 'scalars'`; it never throws, and returns a field-level failure with an
 *   `invalid_parameter` code (see `describeAjvErrors`). It is synchronous for JSON Schema (unless the
 *   schema is `$async`) and may be asynchronous for Standard Schema.
 *
 * Safe to share: compiled validators hold no per-call state.
 *
 * @see JSON Schema 2020-12, draft-07; https://ajv.js.org; https://standardschema.dev
 */
export function createAjvSchemaValidator(options: AjvSchemaValidatorOptions = {}): SchemaValidator {
  const instances = new Map<JsonSchemaDialect, AjvInstance>();
  const nullAsAbsent = options.nullAsAbsent ?? true;

  const ajvFor = (dialect: JsonSchemaDialect): AjvInstance => {
    let instance = instances.get(dialect);
    if (instance === undefined) {
      instance = createConfiguredAjv(dialect);
      instances.set(dialect, instance);
    }
    return instance;
  };

  const createConfiguredAjv = (dialect: JsonSchemaDialect): AjvInstance => {
    const instance = createAjv(dialect);
    options.configureAjv?.(instance, dialect);
    return instance;
  };

  /**
   * Compiles in the shared instance of the dialect; a schema whose `$id` is already taken there by
   * another schema (two tools reusing an `$id`) gets an instance of its own instead.
   */
  const compileWithIsolation = (dialect: JsonSchemaDialect, schema: JsonSchema): AnyValidateFunction => {
    try {
      return ajvFor(dialect).compile(schema as AnySchema);
    } catch (error) {
      if (!(error instanceof Error) || !/already exists/.test(error.message)) throw error;
      return createConfiguredAjv(dialect).compile(schema as AnySchema);
    }
  };

  const engine = options.jsonSchemaEngine ?? 'auto';
  let codeGenerationRefused = false;
  const useInterpreter = (): boolean => {
    if (engine !== 'auto') return engine === 'cfworker';
    if (!codeGenerationRefused && !canGenerateCode()) codeGenerationRefused = true;
    return codeGenerationRefused;
  };

  const compileJsonSchema = (schema: JsonSchema, validateOptions: ValidateOptions): CompiledToolSchema => {
    if (useInterpreter())
      return compileJsonSchemaWithoutCodeGeneration(schema, options.defaultDialect ?? 'draft-2020-12', { nullAsAbsent, coerce: validateOptions.coerce });
    const { dialect, prepared } = chooseDialect(schema, options.defaultDialect ?? 'draft-2020-12');
    // Ajv (strict: false) ignores a format it does not know, as the specification asks: a misspelt
    // one would check nothing. Other names stay annotations (a format of one's own, an API's).
    const formats = ajvFor(dialect).formats;
    const known = new Set([...Object.keys(formats), ...SPECIFICATION_FORMATS, ...ANNOTATION_FORMATS]);
    const misspelt = findUnknownFormat(prepared, (name) => known.has(name) || findClosestName(name, known) === undefined);
    if (misspelt !== undefined) {
      const closest = typeof misspelt.format === 'string' ? findClosestName(misspelt.format, known) : undefined;
      throw new ToolrunError(
        'INVALID_SCHEMA',
        `the JSON Schema has ${closest !== undefined ? 'a misspelt' : 'an invalid'} format at ${misspelt.pointer}: ${truncateText(JSON.stringify(misspelt.format) ?? String(misspelt.format), 80)}${closest !== undefined ? ` (did you mean "${closest}"? add a format of that name with configureAjv if it is yours)` : ' (a format is a string)'}`,
      );
    }
    let validateFunction: AnyValidateFunction;
    try {
      validateFunction = compileWithIsolation(dialect, prepared);
    } catch (error) {
      if (ToolrunError.is(error)) throw error;
      throw new ToolrunError(
        'INVALID_SCHEMA',
        `the JSON Schema does not compile (${dialect}): ${truncateText(error instanceof Error ? error.message : String(error), 300)}`,
        { cause: error },
      );
    }
    const normalise = { nullAsAbsent, coerce: validateOptions.coerce };
    return {
      jsonSchema: schema,
      validate(value: unknown): ValidationResult | Promise<ValidationResult> {
        try {
          // Most arguments need no normalising: no walk and no intermediate result for them.
          const normalised = normalisesNothing(value, normalise) ? undefined : normaliseArguments(value, schema, normalise);
          const input = normalised === undefined ? value : normalised.value;
          const verdict = validateFunction(input) as boolean | Promise<unknown>;
          if (verdict instanceof Promise) {
            return verdict.then(
              () => ({ ok: true, value: input, normalisations: normalised === undefined ? [] : normalised.normalisations }),
              (error: unknown) => describeAjvErrors(asyncErrors(error), schema),
            );
          }
          if (verdict) return { ok: true, value: input, normalisations: normalised === undefined ? [] : normalised.normalisations };
          return describeAjvErrors(validateFunction.errors ?? [], schema);
        } catch (error) {
          return validationCrashed(error);
        }
      },
    };
  };

  return cachingSchemaValidator(compileJsonSchema, { nullAsAbsent, toJsonSchema: options.toJsonSchema });
}

function createAjv(dialect: JsonSchemaDialect): AjvInstance {
  // Schema patterns run in linear time (see compileLinearRegExp): a model controls the strings.
  const ajvOptions = { allErrors: true, strict: false, verbose: true, ownProperties: true, logger: false, code: { regExp: linearRegExpEngine } } as const;
  const instance = dialect === 'draft-2020-12' ? new Ajv2020(ajvOptions) : dialect === 'draft-2019-09' ? new Ajv2019(ajvOptions) : new Ajv(ajvOptions);
  addFormats(instance);
  instance.addFormat('url', { type: 'string', validate: isBoundedUrl });
  return instance;
}

function asyncErrors(error: unknown): ErrorObject[] {
  const errors = typeof error === 'object' && error !== null ? (error as { errors?: unknown }).errors : undefined;
  return Array.isArray(errors) ? (errors as ErrorObject[]) : [];
}
