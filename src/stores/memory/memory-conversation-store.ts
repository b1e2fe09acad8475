import type { Clock } from '../../ground/ports/clock.ts';
import type { ConversationStore } from '../../ground/ports/stores.ts';

interface StoredConversation {
  messages: unknown[];
  expiresAtMs: number;
}

/**
 * An in-memory {@link ConversationStore} with a time to live measured on the injected clock.
 *
 * A conversation expires `ttlMs` after its last `put` (at exactly that instant it is gone). Expired
 * conversations are dropped when read and swept on every `put` (the map is kept in last-put order,
 * so the sweep only touches expired entries). Messages are deep-copied (`structuredClone`) on the
 * way in and out, so callers cannot change stored state. Safe to call concurrently.
 */
export function createMemoryConversationStore(options: { clock: Clock; ttlMs: number }): ConversationStore {
  const { clock, ttlMs } = options;
  const conversations = new Map<string, StoredConversation>();

  const sweepExpired = (nowMs: number) => {
    for (const [ref, conversation] of conversations) {
      if (conversation.expiresAtMs > nowMs) break;
      conversations.delete(ref);
    }
  };

  return {
    async put(conversationRef, messages) {
      const nowMs = clock.now();
      conversations.delete(conversationRef);
      conversations.set(conversationRef, { messages: structuredClone([...messages]), expiresAtMs: nowMs + ttlMs });
      sweepExpired(nowMs);
    },
    async get(conversationRef) {
      const conversation = conversations.get(conversationRef);
      if (conversation === undefined) return undefined;
      if (conversation.expiresAtMs <= clock.now()) {
        conversations.delete(conversationRef);
        return undefined;
      }
      return structuredClone(conversation.messages);
    },
    async delete(conversationRef) {
      conversations.delete(conversationRef);
    },
  };
}
