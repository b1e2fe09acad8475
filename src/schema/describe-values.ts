import { describeSchemaBriefly, listValues } from './describe-schema.ts';
import { describeJsonPointer } from './json-pointer.ts';
import { jsonTypeOf, truncateText } from './preview.ts';
import type { DescribedFieldError } from './summarise-field-errors.ts';

/** Bound of a schema description quoted in a message, in characters. */
const DESCRIPTION_MAX_CHARS = 100;

/**
 * The field error for a required property that is absent: names it, its type and, when the schema
 * has one, its description. `received` is left out (nothing was received).
 */
export function describeMissing(path: string, property: string, propertySchema: unknown): DescribedFieldError {
  const expected = propertySchema === undefined ? 'a value' : describeSchemaBriefly(propertySchema);
  const description =
    typeof propertySchema === 'object' && propertySchema !== null && typeof (propertySchema as Record<string, unknown>).description === 'string'
      ? truncateText(
          String((propertySchema as Record<string, unknown>).description)
            .replace(/\s+/g, ' ')
            .trim(),
          DESCRIPTION_MAX_CHARS,
        )
      : undefined;
  const name = describeJsonPointer(path);
  return {
    path,
    problem: 'required',
    expected,
    message: `missing required field "${name}" (${expected}${description ? `: ${description}` : ''})`,
    code: 'MISSING_REQUIRED',
    headline: `${name} is missing`,
    fix: `add "${property}" (${expected})`,
  };
}

/** The JSON type of a received value, as a message says it: `string`, `integer`, `array`, ... */
export function describeReceivedType(value: unknown): string {
  return jsonTypeOf(value);
}

/** Allowed values for a message: `"a", "b", "c"` (at most 12, then `… (N more)`). */
export function describeListOfValues(values: readonly unknown[]): string {
  return listValues(values, 12);
}
