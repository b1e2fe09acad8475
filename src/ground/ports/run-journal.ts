/**
 * The run journal: a run's durable state behind one port — its claim, its checkpoint, its
 * conversation and the recorded outcome of each tool call. The agent loop, the worker, a replay
 * and a drain read and write a run through it only, so a host (an SDK's own loop, a durable
 * engine) that keeps runs its own way implements this one interface.
 */

import type { ResumableEntry } from '../dead-letter-entries.ts';

/** A JSON value as stored. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Where a run stands, saved after every step so a redelivered message resumes from it. */
export interface RunCheckpoint {
  runId: string;
  /** The queue message that started the run (`''` when the run did not come from a queue). */
  messageId: string;
  status: 'running' | 'completed' | 'tool_failed' | 'max_steps' | 'deadline_exceeded' | 'model_failed' | 'cancelled';
  /** Index of the next step to run (0-based; a step = one model turn and its tool calls). */
  stepIndex: number;
  conversationRef: string;
  tokensSpent: { input: number; output: number };
  /** In-band attempts spent per tool in this run (for `toolRetryBudget`). */
  toolAttempts: Record<string, number>;
  /** Arbitrary JSON the loop keeps with the run (final text, failure details...). */
  data?: { [key: string]: JsonValue };
  /** ISO-8601. */
  updatedAt: string;
}

/** The claim a caller takes on a run: `holder` (unique per piece of work) for `leaseMs` milliseconds. */
export interface RunClaim {
  holder: string;
  /** A positive whole number of milliseconds up to 2^31 − 1. */
  leaseMs: number;
}

/** What was committed for a run: its checkpoint and conversation, both absent for a run never committed. */
export interface CommittedRun {
  /** The last committed checkpoint; `undefined` when the run has none. */
  checkpoint: RunCheckpoint | undefined;
  /**
   * The conversation of `checkpoint.conversationRef` as committed; `undefined` when there is no
   * checkpoint or the conversation is gone (its time to live passed).
   */
  messages: unknown[] | undefined;
}

/**
 * What {@link RunJournal.open} found: the claim refused (with who holds it, when known), or taken
 * with what was committed before the open; `started: true` when the open committed the `start` step
 * it was given (the run had nothing committed).
 */
export type OpenedRun = ({ claimed: true; started?: boolean } & CommittedRun) | { claimed: false; holder: string | undefined };

/** One tool call's outcome, by its place in the run. */
export interface RecordedCall {
  /** The step (0-based) whose model turn asked for the call. */
  stepIndex: number;
  /**
   * The call's index in that turn's tool calls (0-based); for a host run (an SDK's own loop), the
   * host's tool-call id.
   */
  callIndex: number | string;
  /** The outcome as recorded (the tool's result envelope). */
  outcome: JsonValue;
}

/** One step of a run as {@link RunJournal.commit} writes it. */
export interface RunStep {
  conversationRef: string;
  /** The whole conversation after the step. */
  messages: readonly unknown[];
  /**
   * How many of `messages` the journal already holds (the length read at open, or at the previous
   * commit; `0` for a new conversation). Only `messages.slice(storedCount)` is written when the
   * journal holds exactly that many for the reference; otherwise the whole array replaces it.
   */
  storedCount: number;
  /** The run's checkpoint after the step (`checkpoint.runId` is the run). */
  checkpoint: RunCheckpoint;
  /** Outcomes of the step's calls not recorded yet (each recorded unless it already has one). */
  calls: readonly RecordedCall[];
}

/**
 * A run's durable state. Every method rejects with the backend's error when the store cannot be
 * reached (a write that rejects may or may not have gone through: each is idempotent, so the
 * caller sends it again) and with a `TypeError` for a value `JSON.stringify` cannot serialise.
 *
 * - Claims: a run is worked on by one holder at a time; the claim (`run:<runId>`) is a lease its
 *   holder renews ({@link RunJournal.renew}) and ends ({@link RunJournal.finish},
 *   {@link RunJournal.release}); a crashed holder's claim ends with its lease.
 * - Outcomes: each call's outcome is recorded once; the first value stays, so a resumed or
 *   replayed run reads it instead of calling the tool again.
 * - Steps: a commit is atomic (the new messages, the checkpoint and the outcomes it carries, or
 *   none of them), so a process killed at any point leaves the whole step or nothing.
 * - Redeliveries: what a queue consumer needs when a message comes again — the message's last
 *   delivery error, and the marks of failures pushed to a dead-letter sink that cannot push by key.
 * - Host runs (an SDK's own loop, a durable engine): the host keeps the loop, the journal keeps the
 *   conversation a dead-lettered run stopped at ({@link RunJournal.conversation}), the outcomes of
 *   its replayed calls and its completion by a replay, under the host run id `<host>:<runId>`.
 *
 * Implementations: `createStoreJournal` composes one from the store ports (memory, Redis, any
 * custom bundle); the SQLite and PostgreSQL bundles have native ones (one transaction or one
 * statement per open and per step). The contract suite `describeRunJournalContract`
 * (`toolrun/testing/contract`) says what every implementation must do.
 */
export interface RunJournal {
  /**
   * Takes the claim of `runId` for `claim.holder` (unless another holder has an unexpired one;
   * taking one's own claim again renews it), then reads what was committed, so the answer holds
   * whatever the claim's previous holder committed. Without `claim`, only reads. A read that fails
   * after the claim was taken ends the claim before the call rejects.
   *
   * `start` is the first step of the run, for when nothing was committed for it (its first
   * conversation and `running` checkpoint): a journal that can (SQLite) commits it atomically with
   * the claim in that case and answers `started: true` (`checkpoint` and `messages` still say what
   * was committed before: nothing), so a new run's claim and first commit cost one transaction.
   * Otherwise (a refused claim, a run with a checkpoint, no `claim`, or a journal that does not do
   * it) nothing of it is written, `started` is absent, and the caller commits it as usual.
   *
   * @throws ToolrunError `INVALID_OPTIONS` for a `leaseMs` that is not a positive, finite number of
   * milliseconds up to 2^31 − 1.
   */
  open(runId: string, claim?: RunClaim, start?: RunStep): Promise<OpenedRun>;
  /** The outcome recorded for a call, or `undefined` when none was. */
  recorded(runId: string, stepIndex: number, callIndex: number | string): Promise<JsonValue | undefined>;
  /**
   * Records a call's outcome at once (before the step commits) unless it has one already: the first
   * value stays. Resolves with the outcome stored after the call — the earlier one when the call had
   * one (recorded or committed by another writer), else `call.outcome` as stored — so the caller
   * reads it from the answer, not with {@link RunJournal.recorded} again.
   */
  record(runId: string, call: RecordedCall): Promise<JsonValue>;
  /** Forgets a call's outcome, so a replay runs the call again. */
  forget(runId: string, stepIndex: number, callIndex: number | string): Promise<void>;
  /** Commits one step atomically (see {@link RunStep}); the conversation's time to live restarts. */
  commit(step: RunStep): Promise<void>;
  /**
   * A run's last commit: {@link RunJournal.commit}, and the claim of `holder` on the run ended with
   * it (atomically where the backend can; nothing when `holder` does not hold it). Without `holder`,
   * just the commit.
   *
   * `acknowledge` is the id of the run queue message whose handling ends with this commit: a journal
   * that keeps the run queue in the same store (SQLite) acknowledges it in the same transaction, so
   * the end of the run and of its message cost one commit; others ignore it. Either way the caller
   * acknowledges the message afterwards as usual (a message already acknowledged stays so).
   */
  finish(step: RunStep, holder?: string, acknowledge?: string): Promise<void>;
  /**
   * Moves the end of `holder`'s claim to now + `leaseMs`; `false`, changing nothing, when `holder`
   * does not hold it anymore (released, taken over, or ended).
   *
   * @throws ToolrunError `INVALID_OPTIONS` like {@link RunJournal.open}.
   */
  renew(runId: string, holder: string, leaseMs: number): Promise<boolean>;
  /** Ends `holder`'s claim on the run; `false` when it did not hold it. */
  release(runId: string, holder: string): Promise<boolean>;
  /**
   * Records why the last delivery of queue message `messageId` failed (`error`: a bounded line
   * of text), so the dead-letter entry of a message that reaches its delivery bound after a crash
   * still says what went wrong. The same text again leaves the record as it is; another text
   * replaces it (in one statement where the backend can, so a crash keeps the old or the new one).
   * The toolrun stores keep it in the idempotency ledger, under `message:<messageId>:last-delivery-error`,
   * until their retention removes it with the message's run: nothing else clears it (a later
   * failed delivery replaces it; only a message past its delivery bound reads it).
   */
  recordDeliveryError(messageId: string, error: string): Promise<void>;
  /** The text {@link RunJournal.recordDeliveryError} last recorded for `messageId`, or `undefined` when none was. */
  lastDeliveryError(messageId: string): Promise<string | undefined>;
  /**
   * Marks the run's failure at `stepIndex` (an entry of `kind`) as dead-lettered at `at` (ISO 8601),
   * for a dead-letter sink that cannot push by key: a redelivery of the run's message then reads
   * the mark ({@link RunJournal.deadLettered}) instead of pushing the entry again. The first mark
   * stays. The toolrun stores keep it in the idempotency ledger (`<runId>:dead-lettered:<stepIndex>`
   * for `tool`, `<runId>:dead-lettered:<kind>:<stepIndex>` otherwise).
   */
  markDeadLettered(runId: string, stepIndex: number, kind: ResumableEntry['kind'], at: string): Promise<void>;
  /** Whether {@link RunJournal.markDeadLettered} marked the run's failure at `stepIndex` of `kind`. */
  deadLettered(runId: string, stepIndex: number, kind: ResumableEntry['kind']): Promise<boolean>;
  /**
   * The conversation stored under `conversationRef` (by {@link RunJournal.putConversation} or a
   * step's commit), or `undefined` when there is none or its time to live passed.
   */
  conversation(conversationRef: string): Promise<unknown[] | undefined>;
  /**
   * Stores (replaces) the whole conversation under `conversationRef`, without a checkpoint: the
   * conversation a host run or a durable engine dead-lettered stopped at. Its time to live restarts.
   */
  putConversation(conversationRef: string, messages: readonly unknown[]): Promise<void>;
  /**
   * Marks a run whose loop the journal does not checkpoint (a host run, `<host>:<runId>`) completed
   * by a replay, with its final text (`null` for none). The first mark stays. The toolrun stores
   * keep it in the idempotency ledger (`<runId>:completed`, the value `{ text }`).
   */
  markCompleted(runId: string, text: string | null): Promise<void>;
  /** What {@link RunJournal.markCompleted} recorded for `runId` (`{ text }`), or `undefined` when the run has no mark. */
  completion(runId: string): Promise<{ text: string | null } | undefined>;
}

/** The claim key of a run: `run:<runId>` (whoever works on a run — a worker, a replay, a drain — holds it). */
export function runClaimKey(runId: string): string {
  return `run:${runId}`;
}

/** The idempotency-ledger key of the last delivery error of a queue message: `message:<messageId>:last-delivery-error`. */
export function deliveryErrorKey(messageId: string): string {
  return `message:${messageId}:last-delivery-error`;
}

/** The idempotency-ledger key of the dead-letter mark of a run's failure at a step ({@link RunJournal.markDeadLettered}). */
export function deadLetterMarkKey(runId: string, stepIndex: number, kind: ResumableEntry['kind']): string {
  return kind === 'tool' ? `${runId}:dead-lettered:${stepIndex}` : `${runId}:dead-lettered:${kind}:${stepIndex}`;
}

/** The idempotency-ledger key of one tool call: run id + step index + call index (or a host's tool-call id). */
export function ledgerKey(runId: string, stepIndex: number, callIndex: number | string): string {
  return `${runId}:${stepIndex}:${callIndex}`;
}

/** The idempotency-ledger key of a run's completion mark ({@link RunJournal.markCompleted}): `<runId>:completed`. */
export function completionKey(runId: string): string {
  return `${runId}:completed`;
}
