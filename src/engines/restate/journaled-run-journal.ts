import type { OpenedRun, RunJournal } from '../../ground/ports/run-journal.ts';
import { step, type RestateStepContext, type StepRetryOptions } from './restate-steps.ts';

/** Options of {@link journalInRestate}. */
export interface JournalInRestateOptions {
  /** The journal of toolrun's stores (PostgreSQL, Redis, SQLite, memory) the run is also written to. */
  journal: RunJournal;
  /**
   * The claim holder of this invocation (`restate:<invocation id>`): the same in every retry of the
   * invocation, so a retried attempt takes its own claim again instead of finding it held.
   */
  holder: string;
  /** Retries of each journal step (a store outage is ridden out by Restate, then the step fails terminally). */
  retry: StepRetryOptions;
  /** Retries of the `open` step, which also waits out another holder's claim (`busy`). @defaultValue `retry` */
  openRetry?: StepRetryOptions | undefined;
  /**
   * Makes the step that found the run claimed by another holder throw this (a retryable error), so
   * Restate tries again later instead of journaling "busy". @defaultValue none: "busy" is the answer
   */
  busy?: ((holder: string | undefined) => Error) | undefined;
}

/**
 * toolrun's journal as Restate steps: each read and write of the run (open, recorded, record,
 * forget, commit, finish, a message's delivery error, a dead-letter mark, a conversation, a completion mark) is a `ctx.run` step, so a retried invocation gets the same answers in the
 * same order (deterministic replay) and a write is not sent again once journaled. The writes are
 * idempotent, so one sent again after a crash inside its step changes nothing. The claim is taken
 * for `holder` whatever holder the caller names; renewals and releases go to the store directly
 * (they keep a lease, they decide nothing).
 */
export function journalInRestate(context: RestateStepContext, options: JournalInRestateOptions): RunJournal {
  const { journal, holder, retry } = options;
  return {
    open: (runId, claim) =>
      step(
        context,
        'toolrun.journal.open',
        async (): Promise<OpenedRun> => {
          const opened = await journal.open(runId, claim === undefined ? undefined : { ...claim, holder });
          if (!opened.claimed && options.busy) throw options.busy(opened.holder);
          return opened;
        },
        options.openRetry ?? retry,
      ),
    recorded: (runId, stepIndex, callIndex) => step(context, 'toolrun.journal.recorded', () => journal.recorded(runId, stepIndex, callIndex), retry),
    record: (runId, call) => step(context, 'toolrun.journal.record', () => journal.record(runId, call), retry),
    forget: (runId, stepIndex, callIndex) => step(context, 'toolrun.journal.forget', () => journal.forget(runId, stepIndex, callIndex), retry),
    commit: (runStep) => step(context, 'toolrun.journal.commit', () => journal.commit(runStep), retry),
    finish: (runStep, finishing) => step(context, 'toolrun.journal.finish', () => journal.finish(runStep, finishing === undefined ? undefined : holder), retry),
    renew: (runId, _holder, leaseMs) => journal.renew(runId, holder, leaseMs),
    release: (runId) => journal.release(runId, holder),
    recordDeliveryError: (messageId, error) => step(context, 'toolrun.journal.recordDeliveryError', () => journal.recordDeliveryError(messageId, error), retry),
    lastDeliveryError: (messageId) => step(context, 'toolrun.journal.lastDeliveryError', () => journal.lastDeliveryError(messageId), retry),
    markDeadLettered: (runId, stepIndex, kind, at) =>
      step(context, 'toolrun.journal.markDeadLettered', () => journal.markDeadLettered(runId, stepIndex, kind, at), retry),
    deadLettered: (runId, stepIndex, kind) => step(context, 'toolrun.journal.deadLettered', () => journal.deadLettered(runId, stepIndex, kind), retry),
    conversation: (conversationRef) => step(context, 'toolrun.journal.conversation', () => journal.conversation(conversationRef), retry),
    putConversation: (conversationRef, messages) =>
      step(context, 'toolrun.journal.putConversation', () => journal.putConversation(conversationRef, messages), retry),
    markCompleted: (runId, text) => step(context, 'toolrun.journal.markCompleted', () => journal.markCompleted(runId, text), retry),
    completion: (runId) => step(context, 'toolrun.journal.completion', () => journal.completion(runId), retry),
  };
}
