import type { AgentRunResult } from '../agent/run-agent.ts';
import type { ToolCallRecord } from '../core/tool-call-record.ts';
import type { WorkerEvent } from '../worker/worker-events.ts';

/**
 * What the observability components (logger, tracer, metrics, failure recorder) are told, one
 * variant per thing that happened. `createObservability` produces them from the runtime's
 * `onCallEnd`, the run hooks and the worker's events; `at` is epoch ms on the runtime's clock.
 * - `tool-call`: a tool call ended (`stepIndex` when it ran in an observed run);
 * - `recovery`: a run's tool call succeeded at a later step than the failure that opened the episode;
 * - `breaker-open`: a circuit breaker opened (`session`: seen by the loop or a `TOO_MANY_FAILURES`
 *   refusal; `shared`: the worker's `breaker-open` alert);
 * - `dead-letter-add`: an entry went to a dead-letter queue;
 * - `run-end`: an agent run (invocation) ended;
 * - `worker-event`: any other worker event (`dead-letter-full`, breaker half-open/close…), for the log.
 */
export type ToolrunObservation =
  | { kind: 'tool-call'; record: ToolCallRecord; stepIndex: number | null }
  | {
      kind: 'recovery';
      runId: string;
      sessionId: string | null;
      traceId: string;
      /** The tool whose failure opened the episode. */
      toolName: string;
      recoveredWith: string;
      failedAtStep: number;
      recoveredAtStep: number;
      rounds: number;
      failures: number;
      at: number;
    }
  | { kind: 'breaker-open'; toolName: string; scope: 'session' | 'shared'; runId: string | null; sessionId: string | null; at: number }
  | { kind: 'dead-letter-add'; queue: 'message' | 'tool'; reason: string; toolName: string | null; at: number }
  | { kind: 'run-end'; result: AgentRunResult; sessionId: string | null; at: number }
  | { kind: 'worker-event'; event: WorkerEvent };

/** A component that consumes observations. */
export interface ToolrunObserver {
  observe(observation: ToolrunObservation): void;
}
