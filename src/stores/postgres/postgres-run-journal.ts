import type { Clock } from '../../ground/ports/clock.ts';
import {
  completionKey,
  deadLetterMarkKey,
  deliveryErrorKey,
  ledgerKey,
  runClaimKey,
  type JsonValue,
  type RunCheckpoint,
  type RunJournal,
  type RunStep,
} from '../../ground/ports/run-journal.ts';
import type { ClaimStore, IdempotencyLedger, RunStore } from '../../ground/ports/stores.ts';
import { claimLeaseMs } from '../assert-lease-ms.ts';
import { toStoredText } from '../exact-text.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';
import { prepareStatement, type PostgresQueryable } from './postgres-client.ts';
import type { PostgresConversations } from './postgres-conversation-store.ts';
import { toPostgresCheckpointRow } from './postgres-run-store.ts';
import { completionOf } from '../store-journal.ts';

/** An open sweeps ended claims at most once per this many ms of its clock (as the claim store's `acquire`). */
const SWEEP_INTERVAL_MS = 1_000;

/** The stores of one schema a {@link createPostgresRunJournal} journal works with. */
export interface PostgresRunJournalParts {
  /** The quoted schema name. */
  schema: string;
  clock: Clock;
  conversations: PostgresConversations;
  runs: RunStore;
  ledger: IdempotencyLedger;
  claims: ClaimStore;
}

/**
 * The {@link RunJournal} of a PostgreSQL schema. A claimed open is one statement (`claim_run`: the
 * claim, then the checkpoint read at a snapshot taken after it), followed by the conversation's
 * read when the run has one; a step is one statement (`commit_step`: the appended chunk, the call
 * outcomes, the checkpoint and, for `finish`, the end of the claim, in one transaction), sent
 * again with the whole conversation when the stored one is not the one the step extends (expired,
 * swept, replaced meanwhile). A call's outcome recorded alone is one statement (its insert unless
 * the call has one, and the outcome stored: the new or the earlier one); a
 * delivery error is one upsert of its ledger row, a dead-letter mark and a completion mark the
 * ledger's `putIfAbsent`; a conversation stored or read alone is the conversation store's `put` or `get`.
 */
export function createPostgresRunJournal(pool: PostgresQueryable, parts: PostgresRunJournalParts): RunJournal {
  const { schema, clock, conversations, runs, ledger, claims } = parts;
  const claimRun = prepareStatement(`SELECT acquired, checkpoint FROM ${schema}.claim_run($1, $2, $3, $4, $5, $6)`);
  const commitStep = prepareStatement(
    `SELECT ${schema}.commit_step($1, $2, $3, $4, $5, $6, $7, $8, $9::text[], $10::text[], $11, $12, $13, $14, $15) AS committed`,
  );
  // a run's last step, which ends its claim too
  const commitLastStep = prepareStatement(
    `SELECT ${schema}.commit_step($1, $2, $3, $4, $5, $6, $7, $8, $9::text[], $10::text[], $11, $12, $13, $14, $15, $16, $17) AS committed`,
  );
  // the same text again leaves the row (and its time) as it is; another text replaces it in place
  const upsertDeliveryError = prepareStatement(
    `INSERT INTO ${schema}.ledger AS ledger (key, value, recorded_at_ms) VALUES ($1, $2, $3) ON CONFLICT (key) DO UPDATE SET value = excluded.value, recorded_at_ms = excluded.recorded_at_ms WHERE ledger.value <> excluded.value`,
  );
  // the new row, else the earlier one (the same snapshot: the insert's row is not read twice)
  const recordOutcome = prepareStatement(
    `WITH inserted AS (INSERT INTO ${schema}.ledger (key, value, recorded_at_ms) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING RETURNING value) ` +
      `SELECT value FROM inserted UNION ALL SELECT value FROM ${schema}.ledger WHERE key = $1`,
  );
  let sweptAtMs = Number.NEGATIVE_INFINITY;
  /** A checkpoint with its conversation. */
  const committed = async (checkpoint: RunCheckpoint | undefined) => ({
    checkpoint,
    messages: checkpoint === undefined ? undefined : await conversations.store.get(checkpoint.conversationRef),
  });

  const commit = async (step: RunStep, holder: string | undefined) => {
    const { storedCount, messages } = step;
    const runId = step.checkpoint.runId;
    const claim = holder !== undefined ? [toStoredText(runClaimKey(runId)), toStoredText(holder)] : [];
    const statement = holder !== undefined ? commitLastStep : commitStep;
    // storedCount 0 is a replacement too (what is appended is the whole conversation)
    const appendable = Number.isInteger(storedCount) && storedCount > 0 && storedCount <= messages.length;
    const ref = toStoredText(step.conversationRef);
    const text = toJsonText(appendable ? messages.slice(storedCount) : messages);
    const keys = step.calls.map((call) => toStoredText(ledgerKey(runId, call.stepIndex, call.callIndex)));
    const values = step.calls.map((call) => toJsonText(call.outcome));
    const checkpointRow = toPostgresCheckpointRow(step.checkpoint);
    const nowMs = clock.now();
    const args = (whole: boolean, messagesText: string) => [
      ref,
      whole ? 0 : storedCount,
      messages.length,
      messagesText,
      whole,
      Math.floor(nowMs),
      conversations.expiryOf(nowMs),
      conversations.refreshLagMs,
      keys,
      values,
      ...checkpointRow,
      ...claim,
    ];
    const { rows } = await pool.query<{ committed: boolean }>({ ...statement, values: args(!appendable, text) });
    // not the conversation the step extends: nothing was written; the whole of it
    if (rows[0]?.committed !== true) await pool.query({ ...statement, values: args(true, toJsonText(messages)) });
    conversations.afterWrite(nowMs);
  };

  return {
    async open(runId, claim) {
      if (claim === undefined) return { claimed: true, ...(await committed(await runs.get(runId))) };
      const leaseMs = claimLeaseMs(claim.leaseMs, 'acquire');
      const nowMs = Math.floor(clock.now());
      const sweeping = nowMs - sweptAtMs >= SWEEP_INTERVAL_MS;
      if (sweeping) sweptAtMs = nowMs;
      const key = toStoredText(runClaimKey(runId));
      const { rows } = await pool.query<{ acquired: boolean; checkpoint: string | null }>({
        ...claimRun,
        values: [key, toStoredText(claim.holder), nowMs + leaseMs, nowMs, sweeping, toStoredText(runId)],
      });
      const row = rows[0];
      if (row?.acquired !== true) return { claimed: false, holder: (await claims.get(runClaimKey(runId)).catch(() => undefined))?.holder };
      try {
        return { claimed: true, ...(await committed(row.checkpoint === null ? undefined : fromJsonText<RunCheckpoint>(row.checkpoint))) };
      } catch (error) {
        await claims.release(runClaimKey(runId), claim.holder).catch(() => undefined);
        throw error;
      }
    },
    recorded: (runId, stepIndex, callIndex) => ledger.get(ledgerKey(runId, stepIndex, callIndex)),
    async record(runId, call) {
      const values = [toStoredText(ledgerKey(runId, call.stepIndex, call.callIndex)), toJsonText(call.outcome), Math.floor(clock.now())];
      for (;;) {
        const { rows } = await pool.query<{ value: string }>({ ...recordOutcome, values });
        if (rows[0] !== undefined) return fromJsonText<JsonValue>(rows[0].value);
        // the earlier outcome was committed after this statement's snapshot (or deleted since): a new statement sees it
      }
    },
    forget: (runId, stepIndex, callIndex) => ledger.delete(ledgerKey(runId, stepIndex, callIndex)),
    commit: (step) => commit(step, undefined),
    finish: (step, holder) => commit(step, holder),
    renew: (runId, holder, leaseMs) => claims.renew(runClaimKey(runId), holder, leaseMs),
    release: (runId, holder) => claims.release(runClaimKey(runId), holder),
    async recordDeliveryError(messageId, error) {
      await pool.query({ ...upsertDeliveryError, values: [toStoredText(deliveryErrorKey(messageId)), toJsonText(error), Math.floor(clock.now())] });
    },
    async lastDeliveryError(messageId) {
      const value = await ledger.get(deliveryErrorKey(messageId));
      return typeof value === 'string' ? value : undefined;
    },
    async markDeadLettered(runId, stepIndex, kind, at) {
      await ledger.putIfAbsent(deadLetterMarkKey(runId, stepIndex, kind), at);
    },
    deadLettered: async (runId, stepIndex, kind) => (await ledger.get(deadLetterMarkKey(runId, stepIndex, kind))) !== undefined,
    conversation: (conversationRef) => conversations.store.get(conversationRef),
    putConversation: (conversationRef, messages) => conversations.store.put(conversationRef, messages),
    async markCompleted(runId, text) {
      await ledger.putIfAbsent(completionKey(runId), { text });
    },
    completion: async (runId) => completionOf(await ledger.get(completionKey(runId))),
  };
}
