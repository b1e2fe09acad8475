import type { JsonSchema } from '../ground/ports/schema-validator.ts';

/** The JSON Schema dialects the validators run. Draft-04 and draft-06 schemas run as draft-07. */
export type JsonSchemaDialect = 'draft-2020-12' | 'draft-2019-09' | 'draft-07';

const DRAFT_07_URI = /json-schema\.org\/draft-0[3467]\/schema/;
const OLD_DRAFT_URI = /json-schema\.org\/draft-0[346]\/schema/;

/**
 * Picks the dialect of a schema from its `$schema`; draft-04/06 schemas lose their `$schema` (on a
 * shallow copy) and run as draft-07. A schema without `$schema` (or with an unknown one) runs as
 * `fallback`.
 */
export function chooseDialect(schema: JsonSchema, fallback: JsonSchemaDialect): { dialect: JsonSchemaDialect; prepared: JsonSchema } {
  if (typeof schema === 'boolean' || typeof schema.$schema !== 'string') return { dialect: fallback, prepared: schema };
  const uri = schema.$schema;
  if (uri.includes('2020-12')) return { dialect: 'draft-2020-12', prepared: schema };
  if (uri.includes('2019-09')) return { dialect: 'draft-2019-09', prepared: schema };
  if (OLD_DRAFT_URI.test(uri)) {
    const { $schema: _ignored, ...rest } = schema;
    return { dialect: 'draft-07', prepared: rest };
  }
  if (DRAFT_07_URI.test(uri)) return { dialect: 'draft-07', prepared: schema };
  return { dialect: fallback, prepared: schema };
}
