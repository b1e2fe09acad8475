import type { AgentRunStatus } from '../agent/run-agent.ts';

/**
 * How a replay ended:
 * - an agent status (`completed`, `tool_failed` or `model_failed` again, `max_steps`, …) of the resumed run;
 * - `already_completed`: the run had completed (a second replay): nothing was done;
 * - `in_progress`: another replay, drain or worker holds the run's claim: nothing was done (the entry stays);
 * - `expired`: the conversation (or the run's checkpoint) is gone — its TTL passed;
 * - `invalid_entry`: the entry lacks what a replay needs, names a conversation that is not its
 *   run's, or belongs to a host's run that toolrun's loop never checkpointed (its
 *   `originalMessageId` is `<host>:<runId>`: `replayDeadLetter` and the drain route it to the
 *   continuation registered in `hosts`, or leave it with a `message` naming the host); nothing is
 *   written and the entry stays in the DLQ.
 */
export type ReplayStatus = AgentRunStatus | 'already_completed' | 'in_progress' | 'expired' | 'invalid_entry';
