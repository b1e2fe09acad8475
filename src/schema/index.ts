/**
 * The schema layer: JSON Schema and Standard Schema validation behind the `SchemaValidator` port,
 * argument parsing and normalisation as models really send arguments, and field-level error wording.
 */
export { createAjvSchemaValidator, type AjvInstance, type AjvSchemaValidatorOptions } from './ajv-schema-validator.ts';
export type { JsonSchemaDialect } from './json-schema-dialect.ts';
export { MAX_URL_FORMAT_LENGTH } from './string-formats.ts';
export { mapBfclSchema, type BfclSchemaMapping } from './bfcl-dialect.ts';
export { editDistance, findClosestName } from './closest-name.ts';
export { describeAjvErrors, describeAjvFieldErrors, MAX_DESCRIBED_ERRORS } from './describe-ajv-errors.ts';
export { describeSchemaBriefly, listValues, SCHEMA_SUMMARY_MAX_CHARS } from './describe-schema.ts';
export { describeListOfValues, describeMissing, describeReceivedType } from './describe-values.ts';
export { describeDatePattern, describeFormat, type FormatExpectation } from './format-expectations.ts';
export { describeJsonPointer, escapeJsonPointerToken, parseJsonPointer, toJsonPointer, unescapeJsonPointerToken } from './json-pointer.ts';
export { compileLinearRegExp, linearRegExpEngine, MAX_NATIVE_PATHS, type LinearRegExp } from './linear-regexp.ts';
export { normaliseArguments, type NormaliseOptions, type NormaliseResult } from './normalise-arguments.ts';
export {
  ARGUMENTS_PREVIEW_MAX_CHARS,
  parseArguments,
  type MalformedArgumentsFailure,
  type ParseArgumentsOptions,
  type ParseResult,
} from './parse-arguments.ts';
export { DEFAULT_PREVIEW_MAX_CHARS, jsonTypeOf, previewJson, truncateText } from './preview.ts';
export {
  compileStandardSchema,
  FALLBACK_ADVERTISED_SCHEMA,
  isStandardSchema,
  standardSchemaToJsonSchema,
  type CompileStandardSchemaOptions,
  type StandardSchemaToJsonSchema,
} from './standard-schema.ts';
export { DETAIL_MAX_CHARS, SUGGESTION_MAX_CHARS, summariseFieldErrors, type DescribedFieldError, type ValidationFailure } from './summarise-field-errors.ts';
