import type { Database } from 'better-sqlite3';
import type { Clock } from '../../ground/ports/clock.ts';
import {
  completionKey,
  deadLetterMarkKey,
  deliveryErrorKey,
  ledgerKey,
  runClaimKey,
  type OpenedRun,
  type RunCheckpoint,
  type RunJournal,
  type RunStep,
} from '../../ground/ports/run-journal.ts';
import type { ClaimStore, IdempotencyLedger } from '../../ground/ports/stores.ts';
import { claimLeaseMs } from '../assert-lease-ms.ts';
import { fromStoredText, toStoredText } from '../exact-text.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';
import type { SqliteClaimTake } from './sqlite-claim-store.ts';
import type { SqliteConversations, SqliteStepMessages } from './sqlite-conversation-store.ts';
import type { SqliteGroupCommit } from './sqlite-group-commit.ts';
import { prepareSqliteLedgerInsert } from './sqlite-idempotency-ledger.ts';
import { prepareSqliteCheckpointWrite, toSqliteCheckpointRow, type SqliteCheckpointRow } from './sqlite-run-store.ts';
import { completionOf } from '../store-journal.ts';

/** The parts of one SQLite file a {@link createSqliteRunJournal} journal writes in its transactions. */
export interface SqliteRunJournalParts {
  clock: Clock;
  conversations: SqliteConversations;
  ledger: IdempotencyLedger;
  claims: ClaimStore;
  /** The claim acquisition of the file's claim store, for a transaction of the journal. */
  takeClaim: SqliteClaimTake;
  /** Group commit of the connection: opens and steps then write in its next group (one transaction for many runs). */
  group?: SqliteGroupCommit | undefined;
  /** The acknowledgement of a message of the file's run queue, for a transaction of the journal (`finish`). */
  acknowledge: (storedMessageId: string, nowMs: number) => void;
}

/** A step serialised before the write lock is taken (a large step does not hold it longer). */
interface PreparedStep {
  ref: string;
  messages: SqliteStepMessages;
  outcomes: [string, string][];
  checkpoint: SqliteCheckpointRow;
  /** Whether the checkpoint's row is known to need the upsert (no row yet, or another status than the one last written). */
  upsert: boolean;
}

/** Runs whose last written status a journal remembers, at most (past it, it forgets them all: a hint only). */
const MAX_REMEMBERED_STATUSES = 10_000;

/** What a step commit ends besides the step: a claim (key, holder) and a queue message (its id), as stored. */
interface StepEnd {
  release: [string, string] | undefined;
  acknowledge: string | undefined;
}

/** A step that ends nothing (a commit, or the start step of an open). */
const NO_END: StepEnd = { release: undefined, acknowledge: undefined };

/**
 * The {@link RunJournal} of a SQLite file: an open (the claim, the checkpoint and the conversation,
 * or the start step of a run that has none)
 * and a step (its new messages as one appended chunk, its call outcomes, its checkpoint, and for
 * `finish` the end of the claim and the acknowledgement of the run's queue message) are each one IMMEDIATE transaction — with group commit, a share
 * of the group's transaction. A call's outcome recorded alone is the ledger's `putIfAbsent` (the
 * insert, and the read of an earlier outcome, in one transaction); a delivery error (an upsert of
 * its ledger row), a dead-letter mark and a completion mark are one statement each; a
 * conversation stored or read alone is the conversation store's `put` or `get`.
 */
export function createSqliteRunJournal(database: Database, parts: SqliteRunJournalParts): RunJournal {
  const { clock, conversations, ledger, claims, takeClaim, group, acknowledge } = parts;
  const insertOutcome = prepareSqliteLedgerInsert(database);
  const writeCheckpoint = prepareSqliteCheckpointWrite(database);
  const selectCheckpoint = database.prepare('SELECT checkpoint FROM runs WHERE run_id = ?').pluck();
  const selectHolder = database.prepare('SELECT holder FROM claims WHERE key = ? AND lease_until_ms > ?').pluck();
  const deleteClaim = database.prepare('DELETE FROM claims WHERE key = ? AND holder = ?');
  // the same text again leaves the row (and its time) as it is; another text replaces it in place
  const upsertDeliveryError = database.prepare(
    'INSERT INTO ledger (key, value, recorded_at_ms) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, recorded_at_ms = excluded.recorded_at_ms WHERE value <> excluded.value',
  );

  /** In a transaction: the step's messages, outcomes and checkpoint, the end of a claim and the acknowledgement of a message. */
  const writeStep = (step: PreparedStep, nowMs: number, end: StepEnd) => {
    conversations.writeStep(step.ref, step.messages, nowMs);
    for (const [key, valueText] of step.outcomes) insertOutcome(key, valueText, nowMs);
    writeCheckpoint(step.checkpoint, step.upsert);
    if (end.release !== undefined) deleteClaim.run(end.release[0], end.release[1]);
    if (end.acknowledge !== undefined) acknowledge(end.acknowledge, nowMs);
  };
  const writeInTransaction = database.transaction(writeStep);

  /** In a transaction: the claim (when asked for), then what was committed, else the start step (when given). */
  const openRun = (runId: string, claim: { key: string; holder: string; leaseMs: number } | undefined, nowMs: number, start?: PreparedStep): OpenedRun => {
    if (claim !== undefined && !takeClaim(claim.key, claim.holder, nowMs, claim.leaseMs)) {
      const holder = selectHolder.get(claim.key, nowMs) as string | undefined;
      return { claimed: false, holder: holder === undefined ? undefined : fromStoredText(holder) };
    }
    const text = selectCheckpoint.get(runId) as string | undefined;
    const checkpoint = text === undefined ? undefined : fromJsonText<RunCheckpoint>(text);
    if (checkpoint === undefined && start !== undefined) {
      // no row for the run: its checkpoint is an insert
      writeStep({ ...start, upsert: true }, nowMs, NO_END);
      return { claimed: true, started: true, checkpoint: undefined, messages: undefined };
    }
    const messages = checkpoint === undefined ? undefined : conversations.read(toStoredText(checkpoint.conversationRef), nowMs);
    return { claimed: true, checkpoint, messages };
  };
  const openInTransaction = database.transaction(openRun);

  // the status each run's last commit in this journal wrote (stored run id → stored status): a
  // commit that changes it upserts at once instead of trying the update first
  const statusWritten = new Map<string, string>();
  const remember = (row: SqliteCheckpointRow, ended: boolean) => {
    if (ended) {
      statusWritten.delete(row[0]);
      return;
    }
    if (statusWritten.size >= MAX_REMEMBERED_STATUSES) statusWritten.clear();
    statusWritten.set(row[0], row[2]);
  };
  const prepare = (step: RunStep): PreparedStep => {
    const { storedCount, messages } = step;
    const runId = step.checkpoint.runId;
    const appendable = Number.isInteger(storedCount) && storedCount >= 0 && storedCount <= messages.length;
    const checkpoint = toSqliteCheckpointRow(step.checkpoint);
    const written = statusWritten.get(checkpoint[0]);
    return {
      ref: toStoredText(step.conversationRef),
      // `messages` may grow before a grouped write runs: its length now is what is written
      messages: { messages, storedCount, total: messages.length, appendedText: appendable ? toJsonText(messages.slice(storedCount)) : undefined },
      outcomes: step.calls.map((call): [string, string] => [toStoredText(ledgerKey(runId, call.stepIndex, call.callIndex)), toJsonText(call.outcome)]),
      checkpoint,
      upsert: written !== undefined && written !== checkpoint[2],
    };
  };
  const commit = async (step: RunStep, holder: string | undefined, acknowledged: string | undefined) => {
    const prepared = prepare(step);
    const end: StepEnd = {
      release: holder !== undefined ? [toStoredText(runClaimKey(step.checkpoint.runId)), toStoredText(holder)] : undefined,
      acknowledge: acknowledged !== undefined ? toStoredText(acknowledged) : undefined,
    };
    const nowMs = clock.now();
    if (group !== undefined) await group.run(() => writeStep(prepared, nowMs, end));
    else writeInTransaction.immediate(prepared, nowMs, end);
    remember(prepared.checkpoint, end.release !== undefined);
    conversations.afterWrite(nowMs);
  };

  return {
    async open(runId, claim, start) {
      const taken =
        claim !== undefined
          ? { key: toStoredText(runClaimKey(runId)), holder: toStoredText(claim.holder), leaseMs: claimLeaseMs(claim.leaseMs, 'acquire') }
          : undefined;
      const nowMs = clock.now();
      const storedRunId = toStoredText(runId);
      // a read alone, without a claim: nothing to hold still between its two statements
      if (taken === undefined) return openRun(storedRunId, undefined, nowMs);
      const prepared = start !== undefined ? prepare(start) : undefined;
      const opened =
        group !== undefined
          ? await group.run(() => openRun(storedRunId, taken, nowMs, prepared))
          : openInTransaction.immediate(storedRunId, taken, nowMs, prepared);
      if (opened.claimed && opened.started === true) {
        remember(prepared!.checkpoint, false);
        conversations.afterWrite(nowMs);
      }
      return opened;
    },
    recorded: (runId, stepIndex, callIndex) => ledger.get(ledgerKey(runId, stepIndex, callIndex)),
    record: async (runId, call) => (await ledger.putIfAbsent(ledgerKey(runId, call.stepIndex, call.callIndex), call.outcome)).value,
    forget: (runId, stepIndex, callIndex) => ledger.delete(ledgerKey(runId, stepIndex, callIndex)),
    commit: (step) => commit(step, undefined, undefined),
    finish: (step, holder, acknowledged) => commit(step, holder, acknowledged),
    renew: (runId, holder, leaseMs) => claims.renew(runClaimKey(runId), holder, leaseMs),
    release: (runId, holder) => claims.release(runClaimKey(runId), holder),
    async recordDeliveryError(messageId, error) {
      upsertDeliveryError.run(toStoredText(deliveryErrorKey(messageId)), toJsonText(error), clock.now());
    },
    async lastDeliveryError(messageId) {
      const value = await ledger.get(deliveryErrorKey(messageId));
      return typeof value === 'string' ? value : undefined;
    },
    async markDeadLettered(runId, stepIndex, kind, at) {
      insertOutcome(toStoredText(deadLetterMarkKey(runId, stepIndex, kind)), toJsonText(at), clock.now());
    },
    deadLettered: async (runId, stepIndex, kind) => (await ledger.get(deadLetterMarkKey(runId, stepIndex, kind))) !== undefined,
    conversation: (conversationRef) => conversations.store.get(conversationRef),
    putConversation: (conversationRef, messages) => conversations.store.put(conversationRef, messages),
    async markCompleted(runId, text) {
      insertOutcome(toStoredText(completionKey(runId)), toJsonText({ text }), clock.now());
    },
    completion: async (runId) => completionOf(await ledger.get(completionKey(runId))),
  };
}
