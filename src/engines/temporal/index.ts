/**
 * toolrun inside Temporal: the worker side (`toolrun/temporal`). `createToolrunActivities` runs
 * toolrun tool calls as Temporal activities and maps each outcome to Temporal's retry semantics
 * (`toRetryDirective`): the envelope as the activity's result, a retryable `ApplicationFailure` with
 * `nextRetryDelay`, or a non-retryable one that ends the run for toolrun's tool DLQ. The workflow
 * side is `toolrun/temporal/workflow`. `@temporalio/activity` and `@temporalio/common` are optional
 * peers.
 *
 * @packageDocumentation
 */
export { createToolrunActivities, TEMPORAL_HOST, type ToolrunActivitiesOptions } from './activities.ts';
export {
  TOOLRUN_DEAD_LETTER_FAILURE_TYPE,
  TOOLRUN_RETRY_FAILURE_TYPE,
  type TemporalDeadLetterInput,
  type TemporalDeadLetterResult,
  type TemporalToolCall,
  type TemporalToolFailureDetails,
  type ToolrunActivities,
} from './failure-types.ts';
