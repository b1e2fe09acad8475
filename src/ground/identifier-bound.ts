/**
 * The one bound on the length of an identifier toolrun takes from outside and stores as a key: a
 * queue message id (and the run id derived from it), so that every backend takes the same ids.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
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

/** The SHA-256 digest of `id`'s UTF-16 code units, in hex (64 characters): a short stand-in for a long id. */
function idDigest(id: string): string {
  const units = new Uint8Array(id.length * 2);
  for (let index = 0; index < id.length; index++) {
    const unit = id.charCodeAt(index);
    units[index * 2] = unit >> 8;
    units[index * 2 + 1] = unit & 0xff;
  }
  return bytesToHex(sha256(units));
}

/**
 * A store key made of `prefix` and an identifier taken from outside: `<prefix><id>`, or for an id
 * over {@link MAX_ID_BYTES} `<prefix>sha256:<hex digest of its UTF-16 code units>`, which every
 * backend can key by and two such ids never share. For keys taken before the id is checked (a
 * dead-letter entry of a message rejected for its id, a redrive's claim on an entry id).
 */
export function keyOfId(prefix: string, id: string): string {
  return isOverIdBound(id) ? `${prefix}sha256:${idDigest(id)}` : `${prefix}${id}`;
}

/**
 * An identifier made of `id` and a `suffix` that stays within {@link MAX_ID_BYTES}:
 * `<id><suffix>`, or when that is over the bound `sha256:<hex digest of id's UTF-16 code
 * units><suffix>` — the same for the same `id`, and different for different ones. `suffix` is short
 * (under 900 bytes).
 */
export function idWithSuffix(id: string, suffix: string): string {
  const whole = `${id}${suffix}`;
  return isOverIdBound(whole) ? `sha256:${idDigest(id)}${suffix}` : whole;
}
