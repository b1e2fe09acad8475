import { hostEntryMessageId } from '../../worker/host-entry.ts';

/**
 * The host name of runs that ran in Restate: the prefix of their dead-letter entries'
 * `originalMessageId` (`restate:<runId>`, the run id being the virtual object's key), and the key
 * to register {@link restateReplayer} under in `hosts`.
 */
export const RESTATE_HOST = 'restate';

/** The message id (and dead-letter pointer) of a run of a Restate agent: `restate:<runId>`. */
export function restateMessageId(runId: string): string {
  return hostEntryMessageId(RESTATE_HOST, runId);
}
