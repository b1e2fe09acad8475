import type { Clock } from '../../ground/ports/clock.ts';
import type { ConversationStore } from '../../ground/ports/stores.ts';
import { copyStoredItems } from './copy-stored-value.ts';

interface StoredConversation {
  ref: string;
  messages: unknown[];
  expiresAtMs: number;
  /** Index in the write order of its last write; -1 once it is deleted or expired. */
  slot: number;
}

/** Slots of the write order no longer current before it is compacted (and at least as many as the conversations stored). */
const MIN_COMPACTION = 64;

/**
 * An in-memory {@link ConversationStore} with a time to live measured on the injected clock.
 *
 * A conversation expires `ttlMs` after its last write (at exactly that instant it is gone). Expired
 * conversations are dropped when read and swept on every write (from a list of the writes in
 * write order, so the sweep only touches expired conversations and the writes they replaced: O(1)
 * amortised per write, whatever the number of conversations). Messages are deep-copied on the way in and
 * out (`structuredClone`'s copy, made by a walk for plain data, see {@link copyStoredValue}), so
 * callers cannot change stored state; a value `structuredClone` rejects is rejected with its
 * `DataCloneError`, storing nothing. Safe to call concurrently.
 */
export function createMemoryConversationStore(options: { clock: Clock; ttlMs: number }): ConversationStore {
  const { clock, ttlMs } = options;
  const conversations = new Map<string, StoredConversation>();

  /**
   * Every write in write order, from `head` on: the conversation written. A slot is current while
   * the conversation's `slot` is its index; the others (written again since, deleted, or expired)
   * wait to be passed or compacted away. (Not the Map's own order: walking a Map from its start
   * skips every entry deleted there since it was last rehashed, which makes expiry quadratic.)
   */
  let order: StoredConversation[] = [];
  let head = 0;
  /** Slots at or after `head` that are not current. */
  let stale = 0;

  const forget = (conversation: StoredConversation) => {
    conversations.delete(conversation.ref);
    conversation.slot = -1;
    stale += 1;
  };
  const sweepExpired = (nowMs: number) => {
    while (head < order.length) {
      const conversation = order[head]!;
      if (conversation.slot !== head) stale -= 1;
      else if (conversation.expiresAtMs > nowMs) break;
      else {
        conversations.delete(conversation.ref);
        conversation.slot = -1;
      }
      head += 1;
    }
    if (stale + head >= MIN_COMPACTION && stale + head >= conversations.size) {
      const current: StoredConversation[] = [];
      for (let index = head; index < order.length; index++) {
        const conversation = order[index]!;
        if (conversation.slot !== index) continue;
        conversation.slot = current.length;
        current.push(conversation);
      }
      order = current;
      head = 0;
      stale = 0;
    }
  };
  /** Makes `conversation` the one stored under its ref, last in write order, expiring `ttlMs` from now. */
  const replace = (conversation: StoredConversation, nowMs: number) => {
    const previous = conversations.get(conversation.ref);
    if (previous !== undefined) {
      previous.slot = -1;
      stale += 1;
    }
    conversation.expiresAtMs = nowMs + ttlMs;
    conversation.slot = order.length;
    order.push(conversation);
    conversations.set(conversation.ref, conversation);
    sweepExpired(nowMs);
  };

  return {
    async put(conversationRef, messages) {
      replace({ ref: conversationRef, messages: copyStoredItems(messages), expiresAtMs: 0, slot: -1 }, clock.now());
    },
    async get(conversationRef) {
      const conversation = conversations.get(conversationRef);
      if (conversation === undefined) return undefined;
      if (conversation.expiresAtMs <= clock.now()) {
        forget(conversation);
        return undefined;
      }
      return copyStoredItems(conversation.messages);
    },
    async delete(conversationRef) {
      const conversation = conversations.get(conversationRef);
      if (conversation !== undefined) forget(conversation);
    },
  };
}
