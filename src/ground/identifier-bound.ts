/**
 * The one bound on the length of an identifier toolrun takes from outside and stores as a key: a
 * queue message id (and the run id derived from it), so that every backend takes the same ids.
 */
import { fitUtf8 } from './utf8.ts';

/**
 * The longest identifier taken, in UTF-8 bytes: 1,024. Well under the smallest key any backend
 * stores (PostgreSQL's btree index rows stop at 2,704 bytes), with room for what is built on an id
 * (`run_<message id>`, `<run id>:<step>:<call>`, `message:<message id>`).
 */
export const MAX_ID_BYTES = 1_024;

/** Whether `id` is over {@link MAX_ID_BYTES} UTF-8 bytes; reads at most that many bytes of it. */
export function isOverIdBound(id: string): boolean {
  return id.length > MAX_ID_BYTES / 3 && fitUtf8(id, MAX_ID_BYTES + 1).bytes > MAX_ID_BYTES;
}
