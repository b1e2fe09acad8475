/**
 * `toolrun/bullmq`: run-request messages on BullMQ (Redis), handled by toolrun's routing contract
 * with the stores you choose (e.g. `toolrun/postgres`), and the two dead-letter queues in Redis when
 * you want them there. `bullmq` and `ioredis` are optional peer dependencies. Deployment and
 * guarantees: docs/distributed-notes.md.
 */
export { createBullMqWorker, type BullMqRunWorker, type BullMqWorkerOptions, type RunRequestAcknowledger, type WorkerDeadLetterQueues } from './create-bullmq-worker.ts';
export { enqueueRun, type EnqueueRunOptions, type RunRequestOutbox } from './enqueue-run.ts';
export { requeueRunRequests, type PendingRunRequests, type RequeueReport } from './requeue-run-requests.ts';
export { DEFAULT_RUN_JOB_OPTIONS, RUN_JOB_BACKOFF_TYPE, RUN_JOB_NAME, type RunJobData } from './run-job.ts';
export { fromJobId, toJobId } from './job-id.ts';
export { createRedisDeadLetterQueues, type RedisDeadLetterQueues, type RedisDeadLetterQueuesOptions } from '../../stores/redis/redis-dead-letter-queues.ts';
