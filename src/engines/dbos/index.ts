/**
 * `toolrun/dbos`: toolrun's agent loop as a DBOS Transact workflow. Model and tool calls are DBOS
 * steps; toolrun classifies, retries (long waits as durable DBOS sleeps), breaks circuits across
 * executors and dead-letters into its own DLQs; a replay is DBOS's fork of the workflow from the
 * failed step. `@dbos-inc/dbos-sdk` is an optional peer: pass your `DBOS` class (or a `DBOSClient`).
 */
export type { DbosControl, DbosEngine, DbosStatusName, DbosStepInfo, DbosWorkflowHandle, DbosWorkflowStatus } from './dbos-api.ts';
export type { DbosAgent, DbosRunFailure, DbosRunInput, DbosRunResult, DbosStartResult } from './dbos-run-types.ts';
export { createDbosAgent, type DbosAgentOptions } from './create-dbos-agent.ts';
export { replayDbosRun, forkStepOf, type DbosReplayOptions, type DbosReplayOutcome } from './replay-dbos-run.ts';
export { createDbosReplayer, type DbosReplayerOptions } from './dbos-replayer.ts';
export { sweepDbosGaveUp, type DbosSweepOptions, type DbosSweepResult } from './sweep-dbos-gave-up.ts';
export { durableModel } from './durable-model.ts';
export { durableRuntime, type DurableRuntimeOptions } from './durable-runtime.ts';
