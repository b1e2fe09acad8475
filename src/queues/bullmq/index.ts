/**
 * `toolrun/bullmq`: run-request messages on BullMQ (Redis), handled by toolrun's worker with the
 * stores you choose (e.g. `toolrun/postgres`). `bullmq` and `ioredis` are optional peer
 * dependencies; the dead-letter queues in Redis are in `toolrun/redis`.
 *
 * @packageDocumentation
 */
export {
  createBullMqWorker,
  type BullMqRunWorker,
  type BullMqWorkerOptions,
  type RunRequestAcknowledger,
  type WorkerDeadLetterQueues,
} from './create-bullmq-worker.ts';
export { enqueueRun, type EnqueueRunOptions, type RunRequestOutbox } from './enqueue-run.ts';
export { requeueRunRequests, type PendingRunRequests, type RequeueReport } from './requeue-run-requests.ts';
export { DEFAULT_RUN_JOB_OPTIONS, type RunJobData } from './run-job.ts';
export { fromJobId, toJobId } from './job-id.ts';
