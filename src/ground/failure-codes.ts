/**
 * The failure taxonomy of SPEC.md §1.2: five failure types, each with stable codes.
 *
 * @see SPEC.md §1.2
 */

/** The five failure types. What the model should do differs per type. */
export type FailureType = 'invalid_parameter' | 'environment' | 'permission' | 'logic' | 'circuit_breaker';

/** Every stable failure code, with the type it belongs to and whether a retry by the model can help. */
export const FAILURE_CODES = {
  MALFORMED_ARGUMENTS: { type: 'invalid_parameter', retryable: true },
  MISSING_REQUIRED: { type: 'invalid_parameter', retryable: true },
  INVALID_TYPE: { type: 'invalid_parameter', retryable: true },
  INVALID_ENUM: { type: 'invalid_parameter', retryable: true },
  INVALID_FORMAT: { type: 'invalid_parameter', retryable: true },
  DATE_FORMAT_ERROR: { type: 'invalid_parameter', retryable: true },
  OUT_OF_RANGE: { type: 'invalid_parameter', retryable: true },
  UNKNOWN_PARAMETER: { type: 'invalid_parameter', retryable: true },
  SCHEMA_VALIDATION_FAILED: { type: 'invalid_parameter', retryable: true },
  INVALID_INPUT: { type: 'invalid_parameter', retryable: true },
  TIMEOUT: { type: 'environment', retryable: false },
  UNAVAILABLE: { type: 'environment', retryable: false },
  RATE_LIMITED: { type: 'environment', retryable: false },
  NETWORK_ERROR: { type: 'environment', retryable: false },
  BUDGET_EXHAUSTED: { type: 'environment', retryable: false },
  PERMISSION_DENIED: { type: 'permission', retryable: false },
  AUTH_EXPIRED: { type: 'permission', retryable: false },
  TOOL_NOT_FOUND: { type: 'logic', retryable: false },
  NOT_FOUND: { type: 'logic', retryable: false },
  PRECONDITION_FAILED: { type: 'logic', retryable: false },
  TOOL_EXCEPTION: { type: 'logic', retryable: false },
  OUTPUT_TOO_LARGE: { type: 'logic', retryable: false },
  CANCELLED: { type: 'logic', retryable: false },
  CALL_LIMIT_EXCEEDED: { type: 'logic', retryable: false },
  TOO_MANY_FAILURES: { type: 'circuit_breaker', retryable: false },
  CIRCUIT_OPEN: { type: 'circuit_breaker', retryable: false },
} as const satisfies Record<string, { type: FailureType; retryable: boolean }>;

/** A stable failure code (the envelope's `error.code`). */
export type FailureCode = keyof typeof FAILURE_CODES;

/** Log level per failure type (SPEC.md §1.2): parameters and environment warn, permission and logic error. */
export function logLevelOf(type: FailureType): 'warn' | 'error' {
  switch (type) {
    case 'invalid_parameter':
    case 'environment':
    case 'circuit_breaker':
      return 'warn';
    case 'permission':
    case 'logic':
      return 'error';
    default: {
      const unreachable: never = type;
      return unreachable;
    }
  }
}
