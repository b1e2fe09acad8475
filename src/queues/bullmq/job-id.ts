/**
 * BullMQ refuses some custom job ids: integers (`"42"`) and ids holding `:`. A run message id is
 * used as the job id as is when BullMQ accepts it; otherwise it is escaped to `%` +
 * `encodeURIComponent(id)` (no `:` left, never an integer). The mapping is one-to-one: ids taken
 * as is never contain `%`, escaped ones always start with it.
 */
export function toJobId(messageId: string): string {
  const acceptedAsIs = !messageId.includes(':') && !messageId.includes('%') && `${Number.parseInt(messageId, 10)}` !== messageId && messageId.length > 0;
  return acceptedAsIs ? messageId : `%${encodeURIComponent(messageId)}`;
}

/** The message id a job id was made from (the inverse of {@link toJobId}). */
export function fromJobId(jobId: string): string {
  return jobId.startsWith('%') ? decodeURIComponent(jobId.slice(1)) : jobId;
}
