/**
 * Why something failed, as toolrun keeps it in checkpoints and dead-letter entries: the classifier's
 * `kind` (`server`, `timeout`, `rate_limit`, `auth`, `unknown_tool`, `invalid_response`, …), the
 * upstream HTTP status or `null`, and a redacted, bounded `message`. The one shape of a failure's
 * cause across the loop, both DLQs and replays.
 */
export interface FailureCause {
  kind: string;
  status: number | null;
  message: string;
}
