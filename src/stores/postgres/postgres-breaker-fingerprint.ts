/**
 * What a process of the PostgreSQL stores last learned of `<schema>.breakers` as a whole: its
 * fingerprint, the count of its rows and a sum of a hash of each row's key and `xmin` (the id of
 * the transaction that wrote that version of the row). Any committed write of a breaker — by this
 * toolrun, an older one, an operator's SQL — inserts, replaces or removes a row version, and with
 * it changes the fingerprint; two snapshots with the same fingerprint see the same breaker states.
 * Reading it takes no lock and writes nothing.
 *
 * The statements a worker sends before each model or tool call — the step commit, the run's claim —
 * read the fingerprint too (a subquery in the same statement, at that statement's snapshot, which
 * is taken after the statement was sent). The breaker store then answers `get` from the state it
 * read earlier when that state's fingerprint is the one the latest-sent of those statements saw,
 * and that statement was sent at most `maxStalenessMs` ago: the state as of a snapshot taken after
 * that send, without a round trip of its own.
 */
export interface BreakerFingerprintTracker {
  /** Marks a statement about to be sent that reads the fingerprint: pass the ticket to {@link BreakerFingerprintTracker.observe}. */
  send(nowMs: number): BreakerStatementTicket;
  /**
   * Notes the fingerprint a statement read. Of the statements answered, the one sent last counts (its
   * snapshot saw every write committed before it was sent); an answer to an earlier one changes nothing.
   */
  observe(fingerprint: string | null | undefined, ticket: BreakerStatementTicket): void;
  /**
   * Forgets the fingerprint known so far, and ignores the answers of every statement sent before
   * (a write of this process has just committed: their snapshots may predate it).
   */
  invalidate(): void;
  /**
   * Whether a statement sent now should read the fingerprint. Reading it scans `breakers`: past
   * {@link BREAKER_FINGERPRINT_MAX_ROWS} rows that costs more than the checks it saves, so then only
   * one statement per 10 s of the clock reads it, to notice when the table is small again (until
   * then every check reads its row).
   */
  wanted(nowMs: number): boolean;
  /** Whether a state read at `fingerprint` is still the stored one, as of a statement sent at most `maxStalenessMs` before `nowMs`. */
  isFresh(fingerprint: string, nowMs: number): boolean;
}

/** A statement's place in the order this process sent them, and when (the injected clock's ms). */
export interface BreakerStatementTicket {
  readonly order: number;
  readonly sentAtMs: number;
}

/** Rows of `breakers` past which the hot statements stop reading its fingerprint (see {@link BreakerFingerprintTracker.wanted}). */
export const BREAKER_FINGERPRINT_MAX_ROWS = 256;

/** How often a statement reads the fingerprint of a table past {@link BREAKER_FINGERPRINT_MAX_ROWS} rows, in ms. */
const RECHECK_LARGE_TABLE_MS = 10_000;

/**
 * The SQL expression of the fingerprint of `<table>` (a quoted, schema-qualified name): one text
 * value, `<rows>:<sum of hashtextextended(key:xmin)>`.
 */
export function breakerFingerprintSql(table: string): string {
  return `(SELECT count(*) || ':' || coalesce(sum(hashtextextended(key || ':' || xmin::text, 0)), 0) FROM ${table})`;
}

/**
 * A {@link BreakerFingerprintTracker} for one process's stores. `maxStalenessMs` must be a finite
 * number ≥ 0 (the caller checks it). A clock that steps back behind the confirming statement's
 * send makes nothing fresh until a new statement confirms the fingerprint.
 */
export function createBreakerFingerprintTracker(maxStalenessMs: number): BreakerFingerprintTracker {
  let sent = 0;
  /** Answers of statements sent before this one are ignored (an invalidation, or a later-sent answer already counted). */
  let firstCounted = 0;
  let latest: { fingerprint: string; order: number; sentAtMs: number } | undefined;
  /** When the table was last seen past the row limit and rechecked (the clock's ms); undefined while it is not. */
  let largeCheckedAtMs: number | undefined;
  return {
    send(nowMs) {
      sent += 1;
      return { order: sent, sentAtMs: nowMs };
    },
    observe(fingerprint, ticket) {
      if (typeof fingerprint !== 'string' || !Number.isFinite(ticket.sentAtMs) || ticket.order < firstCounted) return;
      // the statement sent last counts: whatever it saw, the answers of those sent before it no longer do
      firstCounted = ticket.order + 1;
      const rows = Number(fingerprint.slice(0, fingerprint.indexOf(':')));
      if (!(rows <= BREAKER_FINGERPRINT_MAX_ROWS)) {
        largeCheckedAtMs = ticket.sentAtMs;
        latest = undefined;
        return;
      }
      largeCheckedAtMs = undefined;
      latest = { fingerprint, order: ticket.order, sentAtMs: ticket.sentAtMs };
    },
    wanted(nowMs) {
      if (largeCheckedAtMs === undefined) return true;
      if (nowMs - largeCheckedAtMs >= RECHECK_LARGE_TABLE_MS || nowMs < largeCheckedAtMs) {
        largeCheckedAtMs = nowMs;
        return true;
      }
      return false;
    },
    invalidate() {
      firstCounted = sent + 1;
      latest = undefined;
    },
    isFresh(fingerprint, nowMs) {
      if (latest === undefined || fingerprint !== latest.fingerprint) return false;
      const ageMs = nowMs - latest.sentAtMs;
      if (ageMs < 0) {
        // the clock stepped back: how old the confirmation is can no longer be told, and never will be
        latest = undefined;
        return false;
      }
      return ageMs <= maxStalenessMs;
    },
  };
}
