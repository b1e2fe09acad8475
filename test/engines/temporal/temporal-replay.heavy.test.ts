/**
 * Temporal's replay of a workflow that uses toolrun's workflow side, offline: `Worker.runReplayHistory`
 * bundles the workflow and replays a history through Temporal's native core, without a server.
 * No Temporal server can run here, so the histories are written by hand (as protobuf objects:
 * `historyFromJSON` fails in this install, two copies of protobufjs 8 answer "type must be a
 * Type"), with the activity's outcome (the envelope, or the failure and its details) produced by the real
 * activity wrapper in MockActivityEnvironment. Heavy: the bundle takes seconds.
 */
import { createRequire } from 'node:module';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { createToolRuntime } from '../../../src/core/create-tool-runtime.ts';
import { defineTool } from '../../../src/core/define-tool.ts';
import { ToolError } from '../../../src/core/tool-error.ts';
import { createToolrunActivities } from '../../../src/engines/temporal/activities.ts';
import type { TemporalToolFailureDetails } from '../../../src/engines/temporal/failure-types.ts';
import { createMemoryStores } from '../../../src/stores/memory/memory-stores.ts';
import { createAutoAdvancingClock } from '../../../src/testing/auto-advancing-clock.ts';

const require = createRequire(import.meta.url);
const WORKFLOWS = require.resolve('./workflows.ts');
const WORKFLOW_ID = 'wf-booking-1';
const RUN_ID = '0b0bcafe-0000-4000-8000-000000000001';
const START_MS = Date.UTC(2026, 0, 1);
const TASK_QUEUE = { name: 'toolrun', kind: 'TASK_QUEUE_KIND_NORMAL' };

/** A JSON payload, as Temporal's default payload converter writes one. */
function payload(value: unknown) {
  return { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(value)) };
}

const seconds = (value: number) => ({ seconds: value });

/** Builds a history from its events, numbering them and giving each a time one second apart. */
function history(events: Array<Record<string, unknown>>) {
  return temporal.api.history.v1.History.fromObject({
    events: events.map((event, index) => ({ eventId: index + 1, eventTime: seconds(START_MS / 1000 + index), ...event })),
  });
}

function workflowTask(scheduledId: number) {
  return [
    {
      eventType: 'EVENT_TYPE_WORKFLOW_TASK_SCHEDULED',
      workflowTaskScheduledEventAttributes: { taskQueue: TASK_QUEUE, startToCloseTimeout: seconds(10), attempt: 1 },
    },
    {
      eventType: 'EVENT_TYPE_WORKFLOW_TASK_STARTED',
      workflowTaskStartedEventAttributes: { scheduledEventId: scheduledId, identity: 'test', requestId: `wt-${scheduledId}` },
    },
    {
      eventType: 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED',
      workflowTaskCompletedEventAttributes: { scheduledEventId: scheduledId, startedEventId: scheduledId + 1, identity: 'test' },
    },
  ];
}

function started(workflowType: string, args: unknown) {
  return {
    eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED',
    workflowExecutionStartedEventAttributes: {
      workflowType: { name: workflowType },
      taskQueue: TASK_QUEUE,
      input: { payloads: [payload(args)] },
      workflowTaskTimeout: seconds(10),
      originalExecutionRunId: RUN_ID,
      firstExecutionRunId: RUN_ID,
      identity: 'test',
      attempt: 1,
    },
  };
}

function activityScheduled(activityId: string, activityType: string, input: unknown, completedEventId: number) {
  return {
    eventType: 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED',
    activityTaskScheduledEventAttributes: {
      activityId,
      activityType: { name: activityType },
      taskQueue: TASK_QUEUE,
      input: { payloads: [payload(input)] },
      startToCloseTimeout: seconds(60),
      heartbeatTimeout: seconds(10),
      workflowTaskCompletedEventId: completedEventId,
    },
  };
}

function activityStarted(scheduledId: number) {
  return {
    eventType: 'EVENT_TYPE_ACTIVITY_TASK_STARTED',
    activityTaskStartedEventAttributes: { scheduledEventId: scheduledId, identity: 'test', requestId: `a-${scheduledId}`, attempt: 1 },
  };
}

function activityCompleted(scheduledId: number, result: unknown) {
  return {
    eventType: 'EVENT_TYPE_ACTIVITY_TASK_COMPLETED',
    activityTaskCompletedEventAttributes: {
      result: { payloads: [payload(result)] },
      scheduledEventId: scheduledId,
      startedEventId: scheduledId + 1,
      identity: 'test',
    },
  };
}

function workflowCompleted(result: unknown, completedEventId: number) {
  return {
    eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED',
    workflowExecutionCompletedEventAttributes: { result: { payloads: [payload(result)] }, workflowTaskCompletedEventId: completedEventId },
  };
}

/** The outcomes of the real activity: an envelope for valid arguments, the dead-letter failure for a tool whose key is rejected. */
async function realOutcomes() {
  const clock = createAutoAdvancingClock(START_MS);
  const stores = createMemoryStores({ clock });
  const runtime = createToolRuntime({
    clock,
    tools: [
      defineTool({
        name: 'search_flights',
        description: 'Flights on a date',
        inputSchema: { type: 'object', properties: { date: { type: 'string', format: 'date' } }, required: ['date'] },
        execute: ({ date }) => {
          if (date === '2026-01-06') throw new ToolError({ kind: 'auth', status: 401, message: 'API key rejected' });
          return { date, flights: ['TP 1351'] };
        },
      }),
    ],
  });
  // outcomes not recorded: both calls are (workflow, step 1, call 0), in two different histories
  const activities = createToolrunActivities({ runtime, stores: { toolDlq: stores.toolDlq, journal: stores.journal } });
  const environment = new MockActivityEnvironment({ workflowExecution: { workflowId: WORKFLOW_ID, runId: RUN_ID } }, { logger: new DefaultLogger('ERROR') });
  const envelope = await environment.run(activities.toolrunCallTool, { stepIndex: 1, name: 'search_flights', args: { date: '2026-01-05' }, callId: 'call_1' });
  const thrown = await environment
    .run(activities.toolrunCallTool, { stepIndex: 1, name: 'search_flights', args: { date: '2026-01-06' }, callId: 'call_1' })
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  if (!(thrown instanceof ApplicationFailure)) throw new Error(`expected the activity to throw an ApplicationFailure, got ${String(thrown)}`);
  return { envelope, failure: thrown };
}

/** The history of a run whose tool call completed: the envelope went back to the workflow, which completed. */
function completedHistory(workflowType: string, envelope: unknown) {
  const args = { date: '2026-01-05' };
  return history([
    started(workflowType, [args]),
    ...workflowTask(2), // 2, 3, 4
    activityScheduled('1', 'toolrunCallTool', { stepIndex: 1, name: 'search_flights', args, callId: 'call_1' }, 4), // 5
    activityStarted(5), // 6
    activityCompleted(5, envelope), // 7
    ...workflowTask(8), // 8, 9, 10
    workflowCompleted({ status: 'completed', result: envelope }, 10), // 11
  ]);
}

/** The history of a run whose tool call failed for good: the activity failed non-retryable, the workflow dead-lettered the run. */
function deadLetterHistory(workflowType: string, failure: ApplicationFailure, failureType: string = failure.type ?? '') {
  const args = { date: '2026-01-06' };
  const details = failure.details?.[0] as TemporalToolFailureDetails;
  return history([
    started(workflowType, [args]),
    ...workflowTask(2), // 2, 3, 4
    activityScheduled('1', 'toolrunCallTool', { stepIndex: 1, name: 'search_flights', args, callId: 'call_1' }, 4), // 5
    activityStarted(5), // 6
    {
      eventType: 'EVENT_TYPE_ACTIVITY_TASK_FAILED',
      activityTaskFailedEventAttributes: {
        failure: {
          message: failure.message,
          source: 'TypeScriptSDK',
          applicationFailureInfo: { type: failureType, nonRetryable: failure.nonRetryable, details: { payloads: [payload(details)] } },
        },
        scheduledEventId: 5,
        startedEventId: 6,
        identity: 'test',
        retryState: 'RETRY_STATE_NON_RETRYABLE_FAILURE',
      },
    }, // 7
    ...workflowTask(8), // 8, 9, 10
    activityScheduled('2', 'toolrunDeadLetter', { workflowId: WORKFLOW_ID }, 10), // 11
    activityStarted(11), // 12
    activityCompleted(11, { id: 'dlq_1', added: true }), // 13
    ...workflowTask(14), // 14, 15, 16
    workflowCompleted({ status: 'tool_failed', reason: details.reason, entryId: 'dlq_1' }, 16), // 17
  ]);
}

describe('Temporal replay of a workflow using toolrun (Worker.runReplayHistory, offline)', () => {
  let outcomes: Awaited<ReturnType<typeof realOutcomes>>;

  beforeAll(async () => {
    try {
      Runtime.install({ logger: new DefaultLogger('ERROR') });
    } catch {
      // installed already by another file of this process: its logger stays
    }
    outcomes = await realOutcomes();
    expect(outcomes.envelope).toMatchObject({ status: 'success' });
    expect(outcomes.failure).toMatchObject({ type: 'ToolrunDeadLetter', nonRetryable: true });
  }, 60_000);

  it('a completed call replays: the envelope is the activity result, the workflow completes', async () => {
    await Worker.runReplayHistory({ workflowsPath: WORKFLOWS }, completedHistory('bookingWorkflow', outcomes.envelope), WORKFLOW_ID);
  }, 120_000);

  it('a dead-lettered call replays: the workflow reads the non-retryable failure and schedules toolrunDeadLetter', async () => {
    await Worker.runReplayHistory({ workflowsPath: WORKFLOWS }, deadLetterHistory('bookingWorkflow', outcomes.failure), WORKFLOW_ID);
  }, 120_000);

  it("the same history against a workflow without toolrun's workflow side is a nondeterminism error (the test can fail)", async () => {
    await expect(
      Worker.runReplayHistory({ workflowsPath: WORKFLOWS }, deadLetterHistory('naiveBookingWorkflow', outcomes.failure), WORKFLOW_ID),
    ).rejects.toThrow(/Nondeterminism/);
  }, 120_000);

  it("a failure that is not toolrun's (another ApplicationFailure type) is rethrown, not dead-lettered: the dead-letter history does not replay", async () => {
    await expect(
      Worker.runReplayHistory({ workflowsPath: WORKFLOWS }, deadLetterHistory('bookingWorkflow', outcomes.failure, 'PaymentDeclined'), WORKFLOW_ID),
    ).rejects.toThrow(/Nondeterminism/);
  }, 120_000);
});
