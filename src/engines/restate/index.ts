/**
 * `toolrun/restate`: toolrun inside Restate (`@restatedev/restate-sdk`, an optional peer
 * dependency). `createRestateAgent` is an agent as a Restate virtual object keyed by run id, its
 * model calls, tool calls and store writes journaled `ctx.run` steps, its failures routed to
 * toolrun's two DLQs; `restateReplayer`, registered as `hosts.restate`, makes `toolrun dlq replay`,
 * the drain and the dashboard resume such a run with `replayRestateEntry`, a new Restate invocation
 * on the run's key; `startRestateServer` starts a local restate-server for tests and examples.
 *
 * @packageDocumentation
 */
export {
  createRestateAgent,
  DEFAULT_STORE_STEP_RETRY,
  type RestateAgent,
  type RestateAgentOptions,
  type RestateReplayInput,
  type RestateRunInput,
} from './restate-agent.ts';
export { replayRestateEntry, restateReplayer, type ReplayRestateEntryOptions } from './replay-restate-entry.ts';
export { RESTATE_HOST, restateMessageId } from './restate-pointer.ts';
export { sweepRestatePaused, type SweepRestatePausedOptions, type SweepRestatePausedReport } from './sweep-restate-paused.ts';
export { restateDirectiveOf, type RestateEnding } from './restate-directive.ts';
export { freePort, startRestateServer, type RestateServer, type StartRestateServerOptions } from './restate-server.ts';
export type { StepRetryOptions } from './restate-steps.ts';
