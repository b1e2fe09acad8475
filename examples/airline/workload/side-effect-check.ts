/**
 * Checks, against the airline service's own records and databases, that no booking, cancellation
 * or payment was done twice — through timeouts, retries, tool-DLQ entries and their drain.
 */
import type { AirlineService } from '../http-service.ts';
import { AIRLINE_WRITE_TOOLS } from '../operations.ts';
import type { AirlineRun } from '../trajectories.ts';

/** The outcome of {@link checkSideEffects}. `ok` is true when every check passed. */
export interface SideEffectReport {
  ok: boolean;
  /** Writes applied to a database, by tool. */
  appliedByTool: Record<string, number>;
  /** Successful writes in the recordings of the same conversations, by tool (with the recorded model, an applied count above it would be a double application). */
  recordedByTool: Record<string, number>;
  /** Requests answered from the idempotency store instead of being applied again. */
  idempotentReplays: number;
  /** Highest number of applications of one (database, idempotency key); must be 1 (or 0 without writes). */
  maxApplicationsPerKey: number;
  /** Writes applied more than once: must be empty. */
  appliedTwice: Array<{ databaseKey: string; idempotencyKey: string; toolName: string; applications: number }>;
  /** Applied writes whose key is not one run step's key (`<runId>:<step>:<call>` of a run of that conversation): must be empty. */
  foreignKeys: string[];
  /** New reservations in the databases, and the bookings applied: equal when no booking created two. */
  reservationsCreated: number;
  bookingsApplied: number;
  /** Conversations whose new reservations differ from their applied bookings: must be empty. */
  reservationMismatches: Array<{ conversationKey: string; created: number; booked: number }>;
  /** Problems in words, for the summary. */
  problems: string[];
}

/** Successful write calls of the recordings, per conversation and tool (a reply not starting with `Error`). */
function recordedWrites(runs: readonly AirlineRun[]): Map<string, Record<string, number>> {
  const byConversation = new Map<string, Record<string, number>>();
  for (const run of runs) {
    const counts = byConversation.get(run.trajectoryKey) ?? {};
    byConversation.set(run.trajectoryKey, counts);
    const callNames = new Map<string, string[]>();
    for (const message of run.assistantTurns) {
      if (message.role === 'assistant') {
        for (const call of message.toolCalls ?? []) callNames.set(call.id, [...(callNames.get(call.id) ?? []), call.name]);
      } else if (message.role === 'tool') {
        const names = callNames.get(message.toolCallId ?? '') ?? [];
        const name = names.shift();
        if (name !== undefined && (AIRLINE_WRITE_TOOLS as ReadonlySet<string>).has(name) && !(message.content ?? '').startsWith('Error'))
          counts[name] = (counts[name] ?? 0) + 1;
      }
    }
  }
  return byConversation;
}

/**
 * Compares what the service applied with what it should have: each write once per idempotency key,
 * keys that belong to one run step, one new reservation per applied booking, and no more writes per
 * tool than the recordings made.
 *
 * @param runs every run of the workload (their conversations are the databases to check).
 * @param isInitialReservation whether a reservation id exists in the initial data (edits of those are not new reservations).
 * @param compareWithRecordings check the writes per tool against the recordings (only meaningful
 *   with the recorded model: a real model may legitimately write more).
 */
export function checkSideEffects(
  service: AirlineService,
  runs: readonly AirlineRun[],
  isInitialReservation: (reservationId: string) => boolean,
  compareWithRecordings: boolean,
): SideEffectReport {
  const stats = service.stats();
  const mutations = service.mutations();
  const runIdsByConversation = new Map<string, Set<string>>();
  for (const run of runs) runIdsByConversation.set(run.trajectoryKey, (runIdsByConversation.get(run.trajectoryKey) ?? new Set()).add(run.runId));

  const appliedByTool: Record<string, number> = {};
  const bookingsByConversation = new Map<string, number>();
  const foreignKeys: string[] = [];
  for (const mutation of mutations) {
    appliedByTool[mutation.toolName] = (appliedByTool[mutation.toolName] ?? 0) + mutation.applications;
    if (mutation.toolName === 'book_reservation')
      bookingsByConversation.set(mutation.databaseKey, (bookingsByConversation.get(mutation.databaseKey) ?? 0) + mutation.applications);
    const match = /^(.+):(\d+):(\d+)$/.exec(mutation.idempotencyKey);
    if (match === null || !runIdsByConversation.get(mutation.databaseKey)?.has(match[1] as string))
      foreignKeys.push(`${mutation.databaseKey} ${mutation.idempotencyKey}`);
  }

  const recordedByTool: Record<string, number> = {};
  for (const counts of recordedWrites(runs).values())
    for (const [tool, count] of Object.entries(counts)) recordedByTool[tool] = (recordedByTool[tool] ?? 0) + count;

  const reservationMismatches: SideEffectReport['reservationMismatches'] = [];
  let reservationsCreated = 0;
  for (const conversationKey of runIdsByConversation.keys()) {
    const database = service.database(conversationKey);
    const created = database === undefined ? 0 : database.changedRecords().reservations.filter((id) => !isInitialReservation(id)).length;
    const booked = bookingsByConversation.get(conversationKey) ?? 0;
    reservationsCreated += created;
    if (created !== booked) reservationMismatches.push({ conversationKey, created, booked });
  }

  const appliedTwice = mutations.filter((mutation) => mutation.applications > 1);
  const problems: string[] = [];
  if (stats.maxApplicationsPerKey > 1) problems.push(`a write was applied ${stats.maxApplicationsPerKey} times under one idempotency key`);
  for (const mutation of appliedTwice) problems.push(`${mutation.toolName} ${mutation.idempotencyKey} applied ${mutation.applications}×`);
  for (const key of foreignKeys) problems.push(`write under a key that is no run step of its conversation: ${key}`);
  for (const mismatch of reservationMismatches)
    problems.push(`${mismatch.conversationKey}: ${mismatch.created} new reservations for ${mismatch.booked} applied bookings`);
  for (const [tool, applied] of compareWithRecordings ? Object.entries(appliedByTool) : []) {
    if (applied > (recordedByTool[tool] ?? 0)) problems.push(`${tool}: ${applied} applied, more than the ${recordedByTool[tool] ?? 0} the recordings made`);
  }
  return {
    ok: problems.length === 0,
    appliedByTool,
    recordedByTool,
    idempotentReplays: stats.idempotentReplays,
    maxApplicationsPerKey: stats.maxApplicationsPerKey,
    appliedTwice,
    foreignKeys,
    reservationsCreated,
    bookingsApplied: [...bookingsByConversation.values()].reduce((sum, count) => sum + count, 0),
    reservationMismatches,
    problems,
  };
}
