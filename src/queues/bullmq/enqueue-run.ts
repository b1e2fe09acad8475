import type { JobsOptions, Queue } from 'bullmq';
import { enqueuedMessageId } from '../../stores/assert-lease-ms.ts';
import { toJobId } from './job-id.ts';
import { DEFAULT_RUN_JOB_OPTIONS, RUN_JOB_NAME, type RunJobData } from './run-job.ts';

/** A durable record of run requests (e.g. the `queue` of `toolrun/postgres`): written before the job. */
export interface RunRequestOutbox {
  /** Records the request; an id that exists is a no-op. */
  enqueue(message: { body: string; id: string }): Promise<string>;
}

/** Options of {@link enqueueRun}. */
export interface EnqueueRunOptions {
  /**
   * Record the request here first, so it survives the loss of Redis: `requeueRunRequests`
   * re-enqueues every recorded request the worker has not acknowledged.
   */
  outbox?: RunRequestOutbox;
  /** Overrides of {@link DEFAULT_RUN_JOB_OPTIONS} (`jobId` is always derived from `id`). */
  jobOptions?: Omit<JobsOptions, 'jobId'>;
}

/**
 * Adds a run-request message to a BullMQ queue, as a job named `run` whose id is derived from the
 * message id (`toJobId`). Idempotent while the job exists: adding an id BullMQ still holds (waiting,
 * active, delayed, completed and not yet removed) is a no-op, and a later duplicate is harmless
 * (see `DEFAULT_RUN_JOB_OPTIONS`). With `outbox`, the request is recorded there first.
 *
 * `body` must be a string and `id`, when given, at most 1,024 UTF-8 bytes (`INVALID_INPUT` otherwise,
 * before the outbox or Redis is asked); what the body says is not checked here: a malformed body is
 * a message failure, dead-lettered by the worker.
 * Returns the message id (`id`, or a new UUID). Rejects with the client's error when Redis (or the
 * outbox) cannot be reached; then the request may or may not have been recorded — enqueue it again.
 */
export async function enqueueRun(queue: Pick<Queue, 'add'>, body: string, id?: string, options: EnqueueRunOptions = {}): Promise<string> {
  const messageId = enqueuedMessageId({ body, id });
  if (options.outbox) await options.outbox.enqueue({ body, id: messageId });
  const data: RunJobData = { body, messageId };
  await queue.add(RUN_JOB_NAME, data, { ...DEFAULT_RUN_JOB_OPTIONS, ...options.jobOptions, jobId: toJobId(messageId) });
  return messageId;
}
