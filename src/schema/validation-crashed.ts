import { truncateText } from './preview.ts';
import type { ValidationResult } from '../ground/ports/schema-validator.ts';
import { summariseFieldErrors } from './summarise-field-errors.ts';

/**
 * The result of a validator that threw (a bug or an unsupported schema feature at run time): a
 * `SCHEMA_VALIDATION_FAILED` failure at the root, never an exception.
 */
export function validationCrashed(error: unknown): ValidationResult {
  const reason = truncateText(error instanceof Error ? error.message : String(error), 200);
  return summariseFieldErrors([
    {
      path: '',
      problem: 'other',
      message: `the arguments could not be validated: ${reason}`,
      code: 'SCHEMA_VALIDATION_FAILED',
      headline: 'the arguments could not be validated',
      fix: 'check the arguments against the tool schema',
    },
  ]);
}
