/**
 * A new conversation reference: `conv_`, then 12 lowercase hex digits of `nowMs` (epoch ms) and 20
 * of randomness (80 bits from the platform's cryptographic source) — 32 hex digits in all, like a
 * UUID without its dashes, but ordered by creation time as UUIDv7 is (RFC 9562, §5.7): the rows a
 * store keys by reference (conversations, their chunks) are then appended at the end of their
 * indexes instead of at random places, so a step's write touches pages that are already hot.
 * Uniqueness rests on the random part alone; a `nowMs` outside 0 … 2^48 − 1 is clamped into it.
 */
export function newConversationRef(nowMs: number): string {
  const ms = Math.min(2 ** 48 - 1, Math.max(0, Math.trunc(Number.isFinite(nowMs) ? nowMs : 0)));
  // randomUUID draws from a pooled source (a `getRandomValues` call per reference costs more):
  // 20 of its hex digits, skipping the dashes, the version digit and the variant digit
  const uuid = globalThis.crypto.randomUUID();
  return `conv_${ms.toString(16).padStart(12, '0')}${uuid.slice(0, 8)}${uuid.slice(9, 13)}${uuid.slice(15, 18)}${uuid.slice(20, 23)}${uuid.slice(24, 26)}`;
}
