import type { Clock, RandomSource } from '../ground/ports/clock.ts';
import type { JsonValue, RecordedCall, RunCheckpoint, RunJournal, RunStep } from '../ground/ports/run-journal.ts';
import { isTransientStoreError } from '../core/store-errors.ts';
import { createDurableWriteRetry, type CheckpointRetryOptions } from '../policies/retry-durable-write.ts';
import type { ChatMessage, TokenUsage } from './messages.ts';
import { encodeRunState, type RunState, type ToolBudgetState } from './run-state.ts';

/** Where a run stands in the loop, as a checkpoint records it. */
export interface RunPosition {
  status: RunCheckpoint['status'];
  stepIndex: number;
  conversationRef: string;
  messages: ChatMessage[];
  tokens: TokenUsage;
  budgets: Record<string, ToolBudgetState>;
  state: Omit<RunState, 'version' | 'budgets'>;
}

/** Options of {@link createRunWriter}. */
export interface RunWriterOptions {
  journal: RunJournal;
  runId: string;
  messageId: string;
  /** How many messages of the conversation the journal holds already (what the run resumed from). */
  storedCount: number;
  /** The claim the caller holds on the run: the last commit ends it. */
  claimHolder?: string | undefined;
  /** The queue message the last commit acknowledges when the run ends needing no dead-letter entry. */
  acknowledge?: string | undefined;
  retry?: CheckpointRetryOptions | undefined;
  clock: Clock;
  random: RandomSource;
}

/** The loop's writes to the journal, each sent again during a store outage (see `AgentPersistence.checkpointRetry`). */
export interface RunWriter {
  /** The outcome a call of an earlier attempt recorded, if any. */
  recorded(stepIndex: number, callIndex: number): Promise<JsonValue | undefined>;
  /**
   * A call's outcome: recorded at once, or (`deferred`) left to the step commit that follows at once
   * (no wait, no other write between), which writes it atomically with the step.
   */
  record(call: RecordedCall, deferred: boolean): Promise<void>;
  /** Records the deferred outcomes on their own (the step will not be committed), best effort. */
  recordDeferred(): Promise<void>;
  /** Commits the step at `position` with the deferred outcomes; a final status also ends the claim. */
  save(position: RunPosition): Promise<void>;
}

/** The checkpoint of a run at `position`, as a step commit writes it. */
function checkpointAt(position: RunPosition, run: { runId: string; messageId: string; clock: Clock }): RunCheckpoint {
  const { status, stepIndex, conversationRef, tokens, budgets } = position;
  return {
    runId: run.runId,
    messageId: run.messageId,
    status,
    stepIndex,
    conversationRef,
    tokensSpent: tokens,
    toolAttempts: Object.fromEntries(Object.entries(budgets).map(([name, state]) => [name, state.attempts])),
    data: encodeRunState({ budgets, ...position.state }),
    updatedAt: new Date(run.clock.now()).toISOString(),
  };
}

/**
 * The first step of a new run (`messages` under `conversationRef`, a `running` checkpoint at step 0
 * with nothing spent), exactly as the loop commits it before its first model call: what a caller
 * passes to `RunJournal.open` as its `start`, and then to the loop as `AgentPersistence.started`.
 */
export function startStep(run: { runId: string; messageId: string; conversationRef: string; messages: readonly ChatMessage[]; clock: Clock }): RunStep {
  const { conversationRef, messages } = run;
  const position: RunPosition = {
    status: 'running',
    stepIndex: 0,
    conversationRef,
    messages: [...messages],
    tokens: { input: 0, output: 0 },
    budgets: {},
    state: { pendingStep: false },
  };
  return { conversationRef, messages: position.messages, storedCount: 0, checkpoint: checkpointAt(position, run), calls: [] };
}

/** The writer of one run's steps and call outcomes to its journal. */
export function createRunWriter(options: RunWriterOptions): RunWriter {
  const { journal, runId, clock } = options;
  const durably = createDurableWriteRetry({ retry: options.retry, retryable: isTransientStoreError, clock, random: options.random });
  let storedCount = options.storedCount;
  let deferred: RecordedCall[] = [];
  const recordAlone = (call: RecordedCall) => durably.execute(() => journal.record(runId, call));
  const writer: RunWriter = {
    recorded: (stepIndex, callIndex) => journal.recorded(runId, stepIndex, callIndex),
    async record(call, defer) {
      if (defer) deferred.push(call);
      else await recordAlone(call);
    },
    async recordDeferred() {
      for (const call of deferred.splice(0)) await recordAlone(call).catch(() => undefined);
    },
    async save(position) {
      const { status, conversationRef, messages } = position;
      const checkpoint = checkpointAt(position, { runId, messageId: options.messageId, clock });
      const step = { conversationRef, messages, storedCount, checkpoint, calls: deferred };
      try {
        // the run's last commit ends its claim
        if (status === 'running') await durably.execute(() => journal.commit(step));
        else {
          // a failed run's message is acknowledged only after its dead-letter entry was pushed
          const acknowledge = status === 'tool_failed' || status === 'model_failed' ? undefined : options.acknowledge;
          await durably.execute(() => journal.finish(step, options.claimHolder, acknowledge));
        }
      } catch (error) {
        // the step is not written: the outcomes it held are, on their own, so that a redelivery
        // does not run those calls again (best effort: the store may refuse these too)
        await writer.recordDeferred();
        throw error;
      }
      deferred = [];
      storedCount = messages.length;
    },
  };
  return writer;
}
