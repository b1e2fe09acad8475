/**
 * Run by `no-eval.test.ts` under `node --disallow-code-generation-from-strings`: validates a booking
 * with the default validator (engine `auto`) and prints whether code generation was allowed, and the
 * failure, as one JSON line. Also compiles a second schema afterwards, to show the switch holds.
 */
import { createAjvSchemaValidator } from '../../src/schema/ajv-schema-validator.ts';
import { canGenerateCode } from '../../src/schema/cfworker-schema-validator.ts';
import { bookingSchema, invalidBooking } from './no-eval-cases.ts';

const validator = createAjvSchemaValidator();
const failure = validator.compile(bookingSchema, { coerce: 'none' }).validate(invalidBooking);
const second = validator.compile({ type: 'integer', minimum: 1 }, { coerce: 'none' }).validate(0);
console.log(JSON.stringify({ codeGeneration: canGenerateCode(), failure, second }));
