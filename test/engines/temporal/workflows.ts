/**
 * Workflows for the replay test: bundled by Temporal's bundler and run in its sandbox, importing
 * toolrun's workflow side as a user's workflow would.
 */
import { proxyActivities } from '@temporalio/workflow';
import { callTool, type ToolrunActivities } from '../../../src/engines/temporal/workflow.ts';

const activities = proxyActivities<ToolrunActivities>({ startToCloseTimeout: '1 minute', heartbeatTimeout: '10 seconds' });

/** One step: the model asked for `search_flights`; the outcome goes back to the model or the run is dead-lettered. */
export async function bookingWorkflow(args: unknown): Promise<unknown> {
  const messages = [
    { role: 'user', content: 'Find me a flight to Lisbon on 5 January' },
    { role: 'assistant', toolCalls: [{ id: 'call_1', name: 'search_flights', args }] },
  ];
  const outcome = await callTool(
    activities,
    { stepIndex: 1, name: 'search_flights', args, callId: 'call_1' },
    { messages, tokensSpent: { input: 120, output: 30 } },
  );
  if (outcome.status === 'dead-lettered') return { status: 'tool_failed', reason: outcome.reason, entryId: outcome.entryId };
  return { status: 'completed', result: outcome.result };
}

/** The same step without toolrun's workflow side: a tool failure fails the workflow (replaying a dead-letter history against it must not pass). */
export async function naiveBookingWorkflow(args: unknown): Promise<unknown> {
  const result = await activities.toolrunCallTool({ stepIndex: 1, name: 'search_flights', args, callId: 'call_1' });
  return { status: 'completed', result };
}
