import type { JobsOptions, Queue } from 'bullmq';
import { toJobId } from './job-id.ts';
import { DEFAULT_RUN_JOB_OPTIONS, RUN_JOB_NAME, type RunJobData } from './run-job.ts';

/** An outbox that lists the requests not yet acknowledged (e.g. the `queue` of `toolrun/postgres`). */
export interface PendingRunRequests {
  pending(options: { limit?: number; afterSequence?: number }): Promise<{ id: string; body: string; sequence: number }[]>;
}

/** What {@link requeueRunRequests} did. */
export interface RequeueReport {
  /** Requests recorded in the outbox and not acknowledged. */
  pending: number;
  /** Of those, the ones BullMQ no longer held and that were added again. */
  requeued: number;
}

/**
 * Re-enqueues every request of `outbox` that the worker has not acknowledged and that BullMQ does not
 * hold: the recovery after Redis lost its data (a restart without persistence, a failover to an
 * empty replica). Requests BullMQ still holds are left alone, so it is safe to run at any time and
 * more than once.
 *
 * Run it once the workers have reconnected and finished the runs they had in hand when Redis was
 * lost (a few seconds): a request whose job vanished while a worker was running it would otherwise be
 * delivered a second time while the first delivery is still running. Even then the run's
 * checkpoint and ledger keep recorded tool calls from repeating; only a call in flight at that
 * instant could run twice.
 */
export async function requeueRunRequests(
  queue: Pick<Queue, 'add' | 'getJob'>,
  outbox: PendingRunRequests,
  options: { batchSize?: number; jobOptions?: Omit<JobsOptions, 'jobId'> } = {},
): Promise<RequeueReport> {
  const batchSize = options.batchSize ?? 500;
  const report: RequeueReport = { pending: 0, requeued: 0 };
  let afterSequence = 0;
  for (;;) {
    const batch = await outbox.pending({ limit: batchSize, afterSequence });
    if (batch.length === 0) return report;
    for (const request of batch) {
      report.pending += 1;
      const jobId = toJobId(request.id);
      if (await queue.getJob(jobId)) continue;
      const data: RunJobData = { body: request.body, messageId: request.id };
      await queue.add(RUN_JOB_NAME, data, { ...DEFAULT_RUN_JOB_OPTIONS, ...options.jobOptions, jobId });
      report.requeued += 1;
    }
    afterSequence = batch[batch.length - 1]!.sequence;
  }
}
