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
