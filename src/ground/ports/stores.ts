/**
 * The storage ports the agent loop and the worker depend on. Every backend (memory, SQLite,
 * PostgreSQL, Redis/BullMQ) implements these and passes the same contract suites
 * (`toolrun/testing`). All methods are async so that networked backends fit; all values are
 * JSON-serialisable.
 */
import type { MessageFailureEntry, ResumableEntry } from '../dead-letter-entries.ts';
import type { JsonValue, RunCheckpoint, RunJournal } from './run-journal.ts';

/**
 * Conversations of runs, addressed by a `conv_…` reference, with a time to live.
 * A tool-DLQ entry holds only the reference, never the messages.
 */
export interface ConversationStore {
  /** Stores (replaces) the whole conversation; resets its TTL. */
  put(conversationRef: string, messages: readonly unknown[]): Promise<void>;
  /** The messages, or `undefined` when the conversation never existed or its TTL has passed. */
  get(conversationRef: string): Promise<unknown[] | undefined>;
  delete(conversationRef: string): Promise<void>;
}

/** Run checkpoints by run id. */
export interface RunStore {
  get(runId: string): Promise<RunCheckpoint | undefined>;
  put(checkpoint: RunCheckpoint): Promise<void>;
}

/**
 * The idempotency ledger: each tool call's recorded outcome, keyed by run id + step index + call
 * index (`${runId}:${stepIndex}:${callIndex}`). A resumed or replayed run reads it before calling
 * a tool, so a call whose outcome was recorded is never repeated.
 */
export interface IdempotencyLedger {
  get(key: string): Promise<JsonValue | undefined>;
  /**
   * Records `value` unless the key already has one. Returns what the ledger now holds for the key
   * and whether this call stored it. Atomic: of two concurrent callers exactly one stores.
   */
  putIfAbsent(key: string, value: JsonValue): Promise<{ stored: boolean; value: JsonValue }>;
  /** Removes an entry (used when a replay must re-execute a call that had failed). */
  delete(key: string): Promise<void>;
}

/**
 * State of shared (cross-run, cross-process) circuit breakers, by key (usually the tool name).
 * `update` is an atomic read-modify-write: the function sees the current record (or `undefined`)
 * and returns the next one; no other writer interleaves (SQLite: a transaction; Postgres:
 * `SELECT … FOR UPDATE`; Redis: `WATCH`/`MULTI` or a script). `update` may call `fn` more than
 * once (optimistic backends retry), so `fn` must be pure.
 */
export interface BreakerStateStore {
  get(key: string): Promise<JsonValue | undefined>;
  update<T extends JsonValue>(key: string, fn: (current: T | undefined) => T): Promise<{ previous: T | undefined; next: T }>;
}

/** One stored dead-letter entry with its queue-assigned id and when it was added. */
export interface DeadLetterRecord<T> {
  id: string;
  /** ISO-8601 time the entry was added. */
  addedAt: string;
  entry: T;
}

/**
 * Narrows {@link DeadLetterQueue.list} to the entries whose cause fields equal every member given
 * (absent or `undefined` members do not narrow). Fields are read from the stored entry:
 * - `kind`: the entry's `kind` (`tool`, `model`, `run`, `message`); an entry without one counts as
 *   `tool` when it has a string `toolName`, as `model` when it has a string `modelName`;
 * - `toolName`, `modelName`: the entry's own string field of that name;
 * - `reason`: the entry's `reason` when it is a string (a tool-DLQ entry's
 *   `retry-budget-exhausted`, `circuit-open`, …);
 * - `code`: the message-DLQ entry's `reason.code` (`INVALID_MESSAGE`, …), else the entry's
 *   `lastError.code` (a model failure's code).
 * Comparisons are exact (case-sensitive). An entry that is not an object matches only the empty filter.
 * The SQLite and PostgreSQL backends answer it from indexes; memory and Redis by reading the queue.
 */
export interface DeadLetterFilter {
  kind?: string | undefined;
  toolName?: string | undefined;
  modelName?: string | undefined;
  reason?: string | undefined;
  code?: string | undefined;
}

/**
 * Options of {@link DeadLetterQueue.list}.
 *
 * Two ways to page, oldest first: `offset` (skip that many entries; a page shifts when entries
 * before it are pushed or removed in between, and a deep offset costs the entries skipped) or
 * `after` (keyset: the entries whose id comes after that id in the queue's order — pass the id of
 * the last record of the previous page; every entry present throughout is listed exactly once
 * however entries are pushed or removed between pages, and a deep page costs what the first does).
 * With both, `offset` skips entries after `after`.
 */
export interface DeadLetterListOptions {
  /** At most this many records; negative or absent: no bound. */
  limit?: number | undefined;
  /** Skip this many (matching) entries first. @defaultValue 0 */
  offset?: number | undefined;
  /**
   * Only entries that come after the entry with this id (which need not still exist). An id that
   * is not one this queue hands out matches nothing after it: the page is empty.
   */
  after?: string | undefined;
  /** Only entries whose cause fields match. */
  filter?: DeadLetterFilter | undefined;
}

/**
 * One group of {@link DeadLetterQueue.countByCause}: how many stored entries have exactly these
 * cause fields (as {@link DeadLetterFilter} reads them; `null`: the entry has none).
 */
export interface DeadLetterCauseCount {
  kind: string | null;
  toolName: string | null;
  modelName: string | null;
  reason: string | null;
  code: string | null;
  /** Entries of the group, at least 1. */
  entries: number;
}

/**
 * One group of {@link DeadLetterQueue.countByGroup}: how many stored entries share their cause
 * fields ({@link DeadLetterCauseCount}) and the details an operator groups failures by (the last
 * error's kind and status of a tool-DLQ entry, the first failing field of a message-DLQ entry), with
 * the tokens the group's entries spent. Read from the stored entry (`null`: the entry has none):
 * - `errorKind`: the entry's `lastError.kind` when it is a string (`server`, `rate_limit`, …);
 * - `errorStatus`: its `lastError.status` when it is a number (an HTTP status such as `503`);
 * - `fieldPath`: when the entry's `reason.fields` is an array with a first element, that element's
 *   `path` when it is a string, else `''`; `null` when there is no first field;
 * - `fieldProblem`: that first field's `problem` when it is a string.
 */
export interface DeadLetterGroupCount extends DeadLetterCauseCount {
  /** The tool-DLQ entry's `lastError.kind` (`server`, `rate_limit`, …); `null` when it is not a string. */
  errorKind: string | null;
  /** Its `lastError.status` (an HTTP status such as `503`); `null` when it is not a number. */
  errorStatus: number | null;
  /** The message-DLQ entry's first `reason.fields` element's `path` (`''` when not a string); `null` without a first field. */
  fieldPath: string | null;
  /** That first field's `problem` (`type`, `required`, …); `null` when it is not a string. */
  fieldProblem: string | null;
  /** Sum over the group's entries of `tokensSpent.input` (an entry without a number there adds 0). */
  tokensInput: number;
  /** Sum over the group's entries of `tokensSpent.output` (an entry without a number there adds 0). */
  tokensOutput: number;
}

/** What {@link DeadLetterQueue.pushOnce} did. */
export interface KeyedPushResult {
  /** The id of the entry first pushed with the key (it may have been removed since). */
  id: string;
  /** `true`: this call stored the entry; `false`: the key was taken, nothing changed. */
  added: boolean;
}

/**
 * A durable dead-letter queue. It never drops an entry: `push` always stores, `pushOnce` stores
 * unless an entry with its key was stored before; the bounds are enforced by the worker, which
 * stops taking messages when `size()` (entries) or `bytes()` (their stored JSON) reaches its
 * bound. Any object with `push(entry)` can serve as a DLQ sink; this is the full, inspectable port.
 *
 * Entries are JSON values and come back equal to what was pushed, on every backend: strings
 * holding `\u0000` or lone surrogates included (a store that cannot hold a character escapes it
 * and restores it). Every method rejects with the backend's error when the store cannot be
 * reached; `push` and `pushOnce` reject with a `TypeError`, storing nothing, for an entry
 * `JSON.stringify` cannot serialise (a `BigInt`, a cycle).
 */
export interface DeadLetterQueue<T> {
  /** Stores `entry` under a new id and returns the id. Never deduplicates. */
  push(entry: T): Promise<string>;
  /**
   * Stores `entry` unless an entry with `key` was ever pushed to this queue; returns the id of the
   * entry stored under the key and whether this call added it (`added: false`: nothing changed,
   * the entry passed here is dropped as a duplicate of the first).
   *
   * - Atomic across processes: of concurrent callers with one key, exactly one adds.
   * - Idempotent: safe to repeat after a crash between the push and whatever should follow it (the
   *   worker keys `message:<messageId>` and `tool:<runId>:<stepIndex>`, so a message redelivered
   *   after a crash between the push and the queue's ack adds no second entry).
   * - A key outlives its entry: once the entry is removed or purged (it was handled), pushing the
   *   key again still returns `added: false` with the old id, so a late repeat cannot bring back
   *   an entry that someone already dealt with. Keys are therefore kept forever (one small record
   *   per keyed entry ever pushed).
   * - Keys are per queue: the message and tool DLQs of a bundle never share them. Entries pushed
   *   with `push` have no key.
   */
  pushOnce(key: string, entry: T): Promise<KeyedPushResult>;
  get(id: string): Promise<DeadLetterRecord<T> | undefined>;
  /**
   * Oldest first (id order is insertion order), paged by `offset` or by `after` and narrowed by
   * `filter` (see {@link DeadLetterListOptions}).
   */
  list(options?: DeadLetterListOptions): Promise<DeadLetterRecord<T>[]>;
  /** Removes the entry; `false` when no entry has the id (already removed, never pushed). */
  remove(id: string): Promise<boolean>;
  /**
   * Entries stored now (pushed and not removed or purged). Cheap on every built-in backend: a
   * counter kept with each write (SQLite, PostgreSQL), the set's cardinality (Redis, memory).
   */
  size(): Promise<number>;
  /**
   * The total size of the stored entries, in bytes: the sum over every entry of the UTF-8 length
   * of its JSON text (`JSON.stringify(entry)`), so `0` when the queue is empty. Removed and purged
   * entries no longer count; a `pushOnce` that added nothing adds nothing. For a byte bound on the
   * queue (the worker stops at it as it does at `maxEntries`).
   *
   * Cheap on every built-in backend: a running total kept with each write (atomically with it),
   * not a scan of the entries.
   */
  bytes(): Promise<number>;
  /** The oldest entry, for the oldest-entry-age metric. */
  oldest(): Promise<DeadLetterRecord<T> | undefined>;
  /** Removes every entry; returns how many. */
  purge(): Promise<number>;
  /**
   * The stored entries counted per combination of their cause fields (kind, tool, model, reason,
   * code), in no particular order; groups of no entries are left out. For metrics (entries per
   * kind, per tool, per code) without reading the entries. Optional: the SQLite and PostgreSQL
   * backends keep the counts with every write (atomically with it, so the cost is the number of
   * groups, not of entries); without it a reader scans the queue with `list`.
   */
  countByCause?(): Promise<DeadLetterCauseCount[]>;
  /**
   * The stored entries counted per combination of their cause fields and group details (see
   * {@link DeadLetterGroupCount}), with the tokens each group spent, in no particular order; groups
   * of no entries are left out. Finer than {@link DeadLetterQueue.countByCause} (whose groups are
   * sums of these): for the dashboard's and `npm start`'s groups by cause (reason × error × tool,
   * code × field) without reading the entries. Optional: the SQLite and PostgreSQL backends keep
   * these counts with every write (atomically with it: the cost is the number of groups, not of
   * entries), the memory backend in a map; without it a reader scans the queue with `list`.
   */
  countByGroup?(): Promise<DeadLetterGroupCount[]>;
}

/** A message taken from the run-request queue. */
export interface QueueDelivery {
  id: string;
  body: string;
  /**
   * 1 on the first delivery, one more on each redelivery (a lease that ended because its consumer
   * crashed, or a `release`); a `release` with `countDelivery: false` takes its delivery back.
   */
  deliveries: number;
  /** ISO-8601 time it was enqueued. */
  enqueuedAt: string;
}

/** Options of {@link RunQueue.release}. */
export interface ReleaseOptions {
  /**
   * The message is not reserved again before `now + delayMs` milliseconds (a backoff between
   * redeliveries of a message that keeps failing). Until then it counts in `size()` but no
   * `reserve` hands it out, and no `extendLease` of the released delivery can renew it.
   * A whole number of milliseconds from 0 to 2^31 − 1 (about 24.8 days); fractions are rounded up.
   * @defaultValue 0 (reservable at once)
   */
  delayMs?: number;
  /**
   * `false`: the delivery being released does not count toward {@link QueueDelivery.deliveries}
   * (the next reservation gets the same count again). For a failure that was not the message's
   * fault, such as a store outage, so a delivery bound is spent only by the message's own failures.
   * Only a message that is leased (reserved and not released since) has a delivery to give back.
   * @defaultValue true
   */
  countDelivery?: boolean;
  /**
   * The {@link QueueDelivery.deliveries} of the delivery being released. When given, nothing changes
   * unless the message is still on that delivery (not reserved again since, which would mean this
   * consumer's lease ended and another consumer holds it now). Without it the release applies to
   * whichever delivery the message is on.
   */
  deliveries?: number;
}

/**
 * The run-request queue: at-least-once delivery with leases. A message reserved by a consumer
 * that dies is delivered again when its lease expires; the run resumes from its checkpoint.
 *
 * Times (leases, release delays) are measured on the backend's clock (the injected `Clock` for
 * the built-in backends). Messages are delivered in enqueue order among those that are ready.
 * Ids and bodies come back exactly as enqueued, `\u0000` and lone surrogates included. Every
 * method rejects with the backend's error when the store cannot be reached.
 */
export interface RunQueue {
  /**
   * Adds a message; `id` defaults to a new unique id. Enqueuing an id that exists is a no-op.
   *
   * @throws ToolrunError `INVALID_INPUT` (from the built-in queues) for a `body` or `id` that is not a
   * string, or an `id` over 1,024 UTF-8 bytes (`MAX_ID_BYTES`: the longest id every backend can key by).
   */
  enqueue(message: { body: string; id?: string }): Promise<string>;
  /**
   * Takes the next ready message (waiting, or its lease or release delay ended) for `leaseMs`
   * milliseconds and counts the delivery, or returns `undefined` when none is ready.
   *
   * @throws ToolrunError `INVALID_OPTIONS` for a non-positive or non-finite `leaseMs`.
   */
  reserve(leaseMs: number): Promise<QueueDelivery | undefined>;
  /** The message reached a terminal place; it is not delivered again. Unknown ids: no-op. */
  ack(id: string): Promise<void>;
  /**
   * Gives the message back for redelivery: at once by default, or after `options.delayMs`; with
   * `countDelivery: false` the delivery given back is not counted (see {@link ReleaseOptions}).
   * `release(id)` alone gives it back at once and keeps the count. A message that is acked or
   * unknown is left alone; releasing a waiting message only moves its delay.
   *
   * @throws ToolrunError `INVALID_OPTIONS` for a `delayMs` that is negative, not finite or above
   * 2^31 − 1.
   */
  release(id: string, options?: ReleaseOptions): Promise<void>;
  /**
   * Renews the lease of a message this consumer holds: its lease ends `leaseMs` milliseconds from
   * now (not from the old end), so a run longer than one lease is not handed to a second consumer.
   * `deliveries` is the {@link QueueDelivery.deliveries} of the delivery being renewed.
   *
   * Returns `true` when the lease was moved; `false`, changing nothing, when the message is not
   * leased to this delivery anymore: acked, released, unknown, its lease already ended
   * (`now >= leaseUntil`), or it was reserved again after that (the stored delivery count differs
   * from `deliveries`). Once it returned `false`, another consumer may be running the message.
   *
   * Atomic (one conditional write), idempotent, safe to call concurrently with `reserve`.
   *
   * Every built-in queue has it (the contract suite requires it). Optional only so that a queue
   * written before it still type-checks: without it the worker cannot renew leases, and a run
   * longer than its lease may be handed to a second consumer.
   *
   * @throws ToolrunError `INVALID_OPTIONS` for a non-positive or non-finite `leaseMs`.
   */
  extendLease(id: string, deliveries: number, leaseMs: number): Promise<boolean>;
  /** Messages waiting or leased (not acked). */
  size(): Promise<number>;
}

/** Who holds a claim and until when, as {@link ClaimStore.get} reports it. */
export interface ClaimInfo {
  holder: string;
  /** ISO-8601 end of the claim; the claim is over at that instant. */
  leaseUntil: string;
}

/**
 * Exclusive, expiring claims on keys (e.g. `run:<runId>`), so two consumers never work on one thing
 * at once; a crashed holder's claim expires. A lease, like the run queue's: whoever holds it must
 * renew it before it ends, and stops working once a renewal fails.
 *
 * - A claim on `key` is held by `holder` from a successful `acquire` until `now + leaseMs`,
 *   a `release`, or the next `acquire` after its end by another holder. It is over at exactly its
 *   end (`now >= leaseUntil`).
 * - Time is the backend's clock: the injected `Clock` of the memory, SQLite and PostgreSQL stores
 *   (keep the machines' clocks in sync), the Redis server's clock for the Redis store.
 * - Every method is atomic across connections and processes (one conditional write).
 * - Keys and holders are any strings (compared exactly, `\u0000` and lone surrogates included);
 *   use a holder id unique per piece of work (e.g. `worker-1:<uuid>`), so a late `release` from a
 *   finished attempt can never end a newer attempt's claim.
 * - Ended claims are deleted by `release` and by later `acquire` calls (Redis: by the key's expiry);
 *   they do not pile up.
 * - Every method rejects with the backend's error when the store cannot be reached.
 */
export interface ClaimStore {
  /**
   * Takes `key` for `holder` until now + `leaseMs` unless another holder has an unexpired claim;
   * re-acquiring one's own claim renews it (even after it ended, as long as nobody took it).
   * Atomic across processes: of concurrent callers for one free key exactly one gets `true`.
   *
   * @throws ToolrunError `INVALID_OPTIONS` for a `leaseMs` that is not a positive, finite number
   * of milliseconds at most 2^31 − 1.
   */
  acquire(key: string, holder: string, leaseMs: number): Promise<boolean>;
  /**
   * Moves the end of `holder`'s claim to now + `leaseMs` (from now, not from the old end). `false`,
   * changing nothing, when `holder` does not hold it anymore: released, taken by another holder, or
   * ended (`now >= leaseUntil`) even if nobody took it since (call `acquire` to take it again).
   *
   * @throws ToolrunError `INVALID_OPTIONS` like {@link ClaimStore.acquire}.
   */
  renew(key: string, holder: string, leaseMs: number): Promise<boolean>;
  /**
   * Ends `holder`'s claim; `false` when it did not hold it (never did, another holder has it, or
   * its claim had already ended; an ended claim of `holder` is deleted all the same).
   */
  release(key: string, holder: string): Promise<boolean>;
  /** Who holds `key` and until when, or `undefined` when nobody holds an unexpired claim. */
  get(key: string): Promise<ClaimInfo | undefined>;
}

/** The bundle of stores a worker, `handleMessage` and `replayToolFailure` share. */
export interface Stores {
  conversations: ConversationStore;
  runs: RunStore;
  ledger: IdempotencyLedger;
  breakers: BreakerStateStore;
  /** Durable message DLQ: the messages that could not start a run. */
  messageDlq: DeadLetterQueue<MessageFailureEntry>;
  /** Durable tool DLQ: the half-done runs a replay resumes (tool, model and poison-run entries). */
  toolDlq: DeadLetterQueue<ResumableEntry>;
  queue: RunQueue;
  /** Claims on runs and DLQ entries, so two drains, replays or workers never work on one run at once. */
  claims: ClaimStore;
  /**
   * A run's durable state as one thing (its claim, checkpoint, conversation and recorded call
   * outcomes, over `conversations`, `runs`, `ledger` and `claims`): what the agent loop, the worker,
   * a replay and a drain read and write runs through. A bundle made from another with one of those
   * four stores replaced gives a journal over its own (`createStoreJournal(bundle)`), or the old
   * journal keeps writing the stores it was made with.
   */
  journal: RunJournal;
  /** Releases connections and file handles. */
  close(): Promise<void>;
}
