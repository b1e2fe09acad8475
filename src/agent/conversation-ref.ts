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
  const random = globalThis.crypto.getRandomValues(new Uint8Array(10));
  let text = `conv_${ms.toString(16).padStart(12, '0')}`;
  for (const byte of random) text += (byte < 16 ? '0' : '') + byte.toString(16);
  return text;
}
