/**
 * The queue messages of the airline workload: one per run, and a handful of malformed ones that
 * must go to the message DLQ without the model ever being called.
 */
import type { AirlineRun } from '../trajectories.ts';

/** A message to enqueue: its queue id and its JSON body. */
export interface WorkloadQueueMessage {
  id: string;
  body: string;
}

/**
 * The message of one run: `{ messages, runId, sessionId }` (see `src/worker/message-schema.ts`).
 * `messages` is the conversation up to and including the customer message the run answers;
 * `sessionId` is the conversation, so the per-session breaker spans its runs. The queue id is the run id.
 */
export function runQueueMessage(run: AirlineRun): WorkloadQueueMessage {
  return { id: run.runId, body: JSON.stringify({ messages: run.messagesBefore, runId: run.runId, sessionId: run.trajectoryKey }) };
}

/** A malformed message, what is wrong with it, and the reason code it must be dead-lettered with. */
export interface MalformedQueueMessage extends WorkloadQueueMessage {
  defect: string;
  expectedCode: 'MALFORMED_JSON' | 'INVALID_MESSAGE';
}

/** Six defects a producer really makes: cut-off JSON, a missing request, wrong types, an unknown role, an unknown field. */
export const MALFORMED_QUEUE_MESSAGES: readonly MalformedQueueMessage[] = [
  {
    id: 'malformed-truncated-json',
    defect: 'JSON cut off mid-message',
    expectedCode: 'MALFORMED_JSON',
    body: '{"messages": [{"role": "user", "content": "Hi, I need to change my flight from JFK to',
  },
  {
    id: 'malformed-missing-input',
    defect: 'neither input nor messages',
    expectedCode: 'INVALID_MESSAGE',
    body: JSON.stringify({ runId: 'orphan-run', sessionId: 'orphan-session' }),
  },
  {
    id: 'malformed-messages-not-array',
    defect: 'messages is a string, not an array',
    expectedCode: 'INVALID_MESSAGE',
    body: JSON.stringify({ messages: 'I want to cancel reservation 4WQ150', runId: 'string-messages' }),
  },
  {
    id: 'malformed-run-id-number',
    defect: 'runId is a number',
    expectedCode: 'INVALID_MESSAGE',
    body: JSON.stringify({ input: 'Please cancel reservation 4WQ150.', runId: 4150 }),
  },
  {
    id: 'malformed-unknown-role',
    defect: 'a message with role "customer"',
    expectedCode: 'INVALID_MESSAGE',
    body: JSON.stringify({ messages: [{ role: 'customer', content: 'Hello, I lost my booking code.' }], runId: 'unknown-role' }),
  },
  {
    id: 'malformed-unknown-field',
    defect: 'an unknown field "priority"',
    expectedCode: 'INVALID_MESSAGE',
    body: JSON.stringify({ input: 'Upgrade me to business class.', runId: 'unknown-field', priority: 'high' }),
  },
];
