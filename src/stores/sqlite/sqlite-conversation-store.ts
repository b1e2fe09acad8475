import type { Database } from 'better-sqlite3';
import type { Clock } from '../../ground/ports/clock.ts';
import type { ConversationStore } from '../../ground/ports/stores.ts';
import { toStoredText } from '../exact-text.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';

/**
 * A {@link ConversationStore} on the `conversations` table. A conversation expires `ttlMs` after its
 * last `put` by the injected clock; expired rows are invisible to `get` and deleted by the next
 * `put` (same transaction, through the expiry index).
 */
export function createSqliteConversationStore(database: Database, options: { clock: Clock; ttlMs: number }): ConversationStore {
  const { clock, ttlMs } = options;
  const upsert = database.prepare(
    `INSERT INTO conversations (ref, messages, expires_at_ms) VALUES (?, ?, ?)
     ON CONFLICT (ref) DO UPDATE SET messages = excluded.messages, expires_at_ms = excluded.expires_at_ms`,
  );
  const sweep = database.prepare('DELETE FROM conversations WHERE expires_at_ms <= ?');
  const select = database.prepare('SELECT messages FROM conversations WHERE ref = ? AND expires_at_ms > ?');
  const remove = database.prepare('DELETE FROM conversations WHERE ref = ?');
  const put = database.transaction((conversationRef: string, messagesText: string, nowMs: number) => {
    upsert.run(conversationRef, messagesText, nowMs + ttlMs);
    sweep.run(nowMs);
  });

  return {
    async put(conversationRef, messages) {
      put.immediate(toStoredText(conversationRef), toJsonText(messages), clock.now());
    },
    async get(conversationRef) {
      const row = select.get(toStoredText(conversationRef), clock.now()) as { messages: string } | undefined;
      return row === undefined ? undefined : fromJsonText<unknown[]>(row.messages);
    },
    async delete(conversationRef) {
      remove.run(toStoredText(conversationRef));
    },
  };
}
