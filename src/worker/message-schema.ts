import type { JsonSchema } from '../ground/ports/schema-validator.ts';

/**
 * The JSON Schema of a run-request message body. The smallest valid body is
 * `{"input": "<the user's request>"}`.
 *
 * - `input`: the user's request as text, or
 * - `messages`: a conversation to continue (`role` system/user/assistant/tool, `content` text);
 * - `runId`: resume or identify the run (default: derived from the message id);
 * - `sessionId`: scope of the per-session breaker (default: the run id);
 * - `system`: a system prompt put first;
 * - `metadata`: anything, kept with the run.
 */
export const RUN_REQUEST_SCHEMA: JsonSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    input: { type: 'string', minLength: 1, maxLength: 1_000_000 },
    messages: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        properties: {
          role: { enum: ['system', 'user', 'assistant', 'tool'] },
          content: { type: ['string', 'null'] },
          toolCalls: { type: 'array' },
          toolCallId: { type: 'string' },
          name: { type: 'string' },
        },
        required: ['role', 'content'],
      },
    },
    runId: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,200}$' },
    sessionId: { type: 'string', minLength: 1, maxLength: 200 },
    system: { type: 'string' },
    metadata: { type: 'object' },
  },
  anyOf: [{ required: ['input'] }, { required: ['messages'] }],
  additionalProperties: false,
};

/** A validated run request. */
export interface RunRequest {
  input?: string;
  messages?: Array<{ role: 'system' | 'user' | 'assistant' | 'tool'; content: string | null; toolCallId?: string; name?: string; toolCalls?: unknown[] }>;
  runId?: string;
  sessionId?: string;
  system?: string;
  metadata?: Record<string, unknown>;
}

/**
 * The message-DLQ reason for a body that fails {@link RUN_REQUEST_SCHEMA}, for the person who owns
 * the queue (not for a model). A JSON object with neither `input` nor `messages` is told which one
 * it needs and what each holds, with an example body and the fields it has that a run request does
 * not take; any other failure keeps the validator's `detail`.
 *
 * @param body - the parsed body.
 * @param failure - the validator's failure (its `detail` and field errors).
 */
export function describeRunRequestFailure(body: unknown, failure: { detail: string; fields: ReadonlyArray<{ path: string; problem: string }> }): string {
  const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
  if (!isObject || Object.hasOwn(body, 'input') || Object.hasOwn(body, 'messages')) return failure.detail;
  const unknown = failure.fields
    .filter((field) => field.problem === 'unknown')
    .map((field) => JSON.stringify(field.path.slice(1).replaceAll('~1', '/').replaceAll('~0', '~').slice(0, 64)))
    .slice(0, 5);
  const other = unknown.length > 0 ? ` It has ${unknown.length === 1 ? 'a field' : 'fields'} a run request does not take: ${unknown.join(', ')}.` : '';
  return (
    'The body is a JSON object without "input" or "messages": a run request needs one of them, either "input" (the user\'s request, a ' +
    'non-empty string) or "messages" (the conversation so far, a non-empty array of {"role", "content"}), e.g. {"input": "Book a flight to Paris"}.' +
    `${other} Fix the program that sends these messages; this one is not retried.`
  );
}
