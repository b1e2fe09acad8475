import type { JobsOptions } from 'bullmq';

/** The BullMQ job name of a run request. */
export const RUN_JOB_NAME = 'run';

/** The data of a run-request job: the message body exactly as it will be validated, and its id. */
export interface RunJobData {
  body: string;
  messageId: string;
  /** Deliveries that failed for the message's own sake (not store outages), kept by the worker for its delivery bound. */
  failedDeliveries?: number;
}

/**
 * The default options of a run-request job:
 * - `attempts: 1_000_000` with the capped exponential backoff of the worker (1 s, 2 s, 4 s … at
 *   most 60 s): a job is retried only when a store failed while handling it (the message is never
 *   at fault: a bad message goes to the message DLQ, which completes the job), so it is retried
 *   until the store is back rather than ever being dropped to the failed set;
 * - `removeOnComplete: { age: 86_400 }` (seconds, BullMQ's unit): completed jobs are kept a day
 *   for inspection, then removed. Enqueuing an id again after that is still harmless: the run's
 *   checkpoint (or the message DLQ's key) makes the worker do nothing twice;
 * - `removeOnFail: false`: a job that did fail (only if `attempts` were lowered) stays inspectable.
 */
export const DEFAULT_RUN_JOB_OPTIONS: Readonly<JobsOptions> = Object.freeze({
  attempts: 1_000_000,
  // a custom type: BullMQ then calls the backoff strategy the worker registers (capped exponential)
  backoff: { type: 'toolrun-capped-exponential' },
  removeOnComplete: { age: 86_400 },
  removeOnFail: false,
});
