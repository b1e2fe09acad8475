/**
 * The 200 recorded gpt-4o airline conversations of τ-bench
 * (`tau-bench/gpt-4o-airline.trajectories.json`, OpenAI chat messages) and their split into runs.
 *
 * A run is the assistant's work between one customer message and its reply to the customer: the
 * assistant messages and tool replies after a `user` message, up to and including the next
 * assistant message without tool calls (or the end of the conversation, when it ended on a tool
 * reply, e.g. after a transfer to a human agent). Each run is one queue message of the workload.
 */
import { readSharedJson } from '../shared-data.ts';
import type { ChatMessage } from './chat-message.ts';

/** A message of a recorded trajectory, as stored (OpenAI chat-completions format). */
export interface RecordedOpenAiMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  name?: string;
}

/** One recorded trajectory: a task, a trial, the reward (1 = solved) and the conversation. */
export interface RecordedTrajectory {
  task_id: number;
  trial: number;
  reward: number;
  info: unknown;
  traj: RecordedOpenAiMessage[];
}

/** One run of a trajectory: see the module comment. */
export interface AirlineRun {
  /** `t{task}-trial{trial}-r{k}`, k counting the runs of the trajectory from 0. */
  runId: string;
  /** `t{task}-trial{trial}`. */
  trajectoryKey: string;
  taskId: number;
  trial: number;
  /** The conversation up to and including the customer message that starts the run. */
  messagesBefore: ChatMessage[];
  /** The recorded assistant messages and tool replies of the run, in order. */
  assistantTurns: ChatMessage[];
}

/** Converts a recorded OpenAI message to the agent loop's {@link ChatMessage}. */
export function toChatMessage(message: RecordedOpenAiMessage): ChatMessage {
  const converted: ChatMessage = { role: message.role, content: message.content ?? null };
  if (message.tool_calls !== undefined && message.tool_calls.length > 0) {
    converted.toolCalls = message.tool_calls.map((call) => ({ id: call.id, name: call.function.name, args: call.function.arguments }));
  }
  if (message.tool_call_id !== undefined) converted.toolCallId = message.tool_call_id;
  return converted;
}

let cachedTrajectories: RecordedTrajectory[] | undefined;

/**
 * The 200 recorded trajectories (read once, then shared: do not mutate).
 *
 * @throws Error naming the missing file when the shared data is absent.
 */
export function loadAirlineTrajectories(): RecordedTrajectory[] {
  cachedTrajectories ??= readSharedJson<RecordedTrajectory[]>('tau-bench', 'gpt-4o-airline.trajectories.json');
  return cachedTrajectories;
}

/** `t{task}-trial{trial}`. */
export function trajectoryKeyOf(trajectory: Pick<RecordedTrajectory, 'task_id' | 'trial'>): string {
  return `t${trajectory.task_id}-trial${trajectory.trial}`;
}

/**
 * Splits one trajectory into runs at the customer's turns. A customer message that the assistant
 * never answered (the simulated customer's closing `###STOP###`) starts no run.
 */
export function splitTrajectoryIntoRuns(trajectory: RecordedTrajectory): AirlineRun[] {
  const messages = trajectory.traj.map(toChatMessage);
  const trajectoryKey = trajectoryKeyOf(trajectory);
  const runs: AirlineRun[] = [];
  let index = 0;
  while (index < messages.length) {
    if (messages[index]?.role !== 'user') {
      index += 1;
      continue;
    }
    const start = index + 1;
    let end = start;
    while (end < messages.length) {
      const message = messages[end] as ChatMessage;
      if (message.role === 'user') break;
      end += 1;
      if (message.role === 'assistant' && message.toolCalls === undefined) break;
    }
    if (end > start) {
      runs.push({
        runId: `${trajectoryKey}-r${runs.length}`,
        trajectoryKey,
        taskId: trajectory.task_id,
        trial: trajectory.trial,
        messagesBefore: messages.slice(0, start),
        assistantTurns: messages.slice(start, end),
      });
    }
    index = end;
  }
  return runs;
}

/** Every run of every trajectory, in trajectory order. */
export function loadAirlineRuns(trajectories: readonly RecordedTrajectory[] = loadAirlineTrajectories()): AirlineRun[] {
  return trajectories.flatMap(splitTrajectoryIntoRuns);
}

/** True when the run's recorded assistant turns include at least one tool call. */
export function runHasToolCalls(run: AirlineRun): boolean {
  return run.assistantTurns.some((message) => message.toolCalls !== undefined);
}
