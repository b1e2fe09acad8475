/**
 * The append-only conversations of the PostgreSQL backend: what a step writes (its chunk, its
 * ledger rows, its checkpoint, in one call of `commit_step`), and the expiry sweep.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { RunCheckpoint, RunStep } from '../src/ground/ports/run-journal.ts';
import { createFakeClock } from '../src/testing/fake-clock.ts';
import { createPostgresClaimStore } from '../src/stores/postgres/postgres-claim-store.ts';
import { createPostgresConversations } from '../src/stores/postgres/postgres-conversation-store.ts';
import { createPostgresRunJournal } from '../src/stores/postgres/postgres-run-journal.ts';
import { migratePostgresSchema, POSTGRES_SCHEMA_VERSION } from '../src/stores/postgres/postgres-migrations.ts';
import { createPostgresStores } from '../src/stores/postgres/postgres-stores.ts';
import { createTestPool, dropSchema, uniqueName } from './fixtures/distributed-services.ts';

const admin = createTestPool({ max: 4 });
const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) await dropSchema(admin, schema);
  await admin.end();
});
const newSchema = () => {
  const schema = uniqueName('toolrun_pgsteps_');
  schemas.push(schema);
  return schema;
};

const HOUR_MS = 60 * 60 * 1000;

const checkpoint = (stepIndex: number, conversationRef: string): RunCheckpoint => ({
  runId: `run_${conversationRef}`,
  messageId: 'm',
  status: 'running',
  stepIndex,
  conversationRef,
  tokensSpent: { input: stepIndex, output: 0 },
  toolAttempts: {},
  updatedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, stepIndex)).toISOString(),
});

describe('PostgreSQL conversations as append-only chunks', () => {
  it('continues runs across a restart: ledger rows only from the steps that have some, first writer kept', async () => {
    const schema = newSchema();
    const quoted = `"${schema}"`;
    const clock = createFakeClock();
    await migratePostgresSchema(admin, schema, clock.now());
    const { createPostgresRunStore } = await import('../src/stores/postgres/postgres-run-store.ts');
    const { createPostgresIdempotencyLedger } = await import('../src/stores/postgres/postgres-idempotency-ledger.ts');
    const runs = createPostgresRunStore(admin, { schema: quoted });
    const ledger = createPostgresIdempotencyLedger(admin, { schema: quoted, clock });
    // the store's statements write the first steps
    const parts = createPostgresConversations(admin, { schema: quoted, clock, ttlMs: HOUR_MS });
    const conversations = parts.store;
    const claims = createPostgresClaimStore(admin, { schema: quoted, clock });
    const journal = createPostgresRunJournal(admin, { schema: quoted, clock, conversations: parts, runs, ledger, claims });
    const commit = (step: RunStep) => journal.commit(step);
    const messages: unknown[] = [{ role: 'user', content: 'go' }];
    await commit({ conversationRef: 'conv_old', messages: [...messages], storedCount: 0, checkpoint: checkpoint(0, 'conv_old'), calls: [] });
    messages.push({ role: 'tool', content: 'first' });
    const first = { key: 'run_conv_old:0:0', stepIndex: 0, callIndex: 0, outcome: { status: 'success', n: 1 } };
    await commit({ conversationRef: 'conv_old', messages: [...messages], storedCount: 1, checkpoint: checkpoint(1, 'conv_old'), calls: [first] });

    await migratePostgresSchema(admin, schema, clock.now());
    const { rows: versions } = await admin.query<{ version: number }>(`SELECT MAX(version) AS version FROM ${quoted}.schema_version`);
    expect(versions[0]!.version).toBe(POSTGRES_SCHEMA_VERSION);
    const { rows: bodies } = await admin.query<{ body: string }>(
      `SELECT prosrc AS body FROM pg_proc WHERE proname = 'commit_step' AND pronamespace = $1::regnamespace`,
      [quoted],
    );
    // two overloads: a step, and a run's last step (the step, then the claim's release)
    expect(bodies).toHaveLength(2);
    expect(bodies.filter(({ body }) => body.includes('IF cardinality(p_ledger_keys) > 0 THEN'))).toHaveLength(1);
    expect(bodies.filter(({ body }) => body.includes('IF NOT ') && body.includes('.commit_step(p_ref,'))).toHaveLength(1);
    // a step without ledger rows: its chunk and checkpoint, no ledger statement's rows
    messages.push({ role: 'assistant', content: 'next' });
    await commit({ conversationRef: 'conv_old', messages: [...messages], storedCount: 2, checkpoint: checkpoint(2, 'conv_old'), calls: [] });
    // a step with ledger rows: the new one stored, the one stored before kept (first writer wins)
    messages.push({ role: 'tool', content: 'second' });
    const second = { key: 'run_conv_old:2:0', stepIndex: 2, callIndex: 0, outcome: { status: 'success', n: 2 } };
    const again = { ...first, outcome: { status: 'success', n: 99 } };
    await commit({ conversationRef: 'conv_old', messages: [...messages], storedCount: 3, checkpoint: checkpoint(3, 'conv_old'), calls: [second, again] });
    expect(await conversations.get('conv_old')).toEqual(messages);
    expect(await runs.get('run_conv_old')).toEqual(checkpoint(3, 'conv_old'));
    expect(await ledger.get(first.key)).toEqual(first.outcome);
    expect(await ledger.get(second.key)).toEqual(second.outcome);
    const { rows: ledgerRows } = await admin.query<{ key: string }>(`SELECT key FROM ${quoted}.ledger ORDER BY key`);
    expect(ledgerRows.map((row) => row.key)).toEqual([first.key, second.key]);
    const { rows: chunks } = await admin.query<{ start_index: number; end_index: number }>(
      `SELECT start_index, end_index FROM ${quoted}.conversation_messages WHERE ref = 'conv_old' ORDER BY start_index`,
    );
    expect(chunks.map((chunk) => [chunk.start_index, chunk.end_index])).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
      [3, 4],
    ]);
    // a step whose conversation is not the stored one still writes nothing, ledger rows included
    const stale = { key: 'run_conv_old:9:0', value: { status: 'success' } };
    const { rows: refused } = await admin.query<{ committed: boolean }>(
      `SELECT ${quoted}.commit_step($1, $2, $3, $4, false, $5, $6, 0, $7::text[], $8::text[], 'run_conv_old', 'm', 'running', 'x', '{}') AS committed`,
      ['conv_old', 2, 3, '[]', Math.floor(clock.now()), Math.ceil(clock.now() + HOUR_MS), [stale.key], [JSON.stringify(stale.value)]],
    );
    expect(refused[0]!.committed).toBe(false);
    expect(await ledger.get(stale.key)).toBeUndefined();
    expect(await runs.get('run_conv_old')).toEqual(checkpoint(3, 'conv_old'));
  });

  it('writes one chunk of the new messages per step, whatever the conversation length, and reads the whole back', async () => {
    const schema = newSchema();
    const clock = createFakeClock();
    const stores = await createPostgresStores({ pool: admin, schema, clock, conversationTtlMs: HOUR_MS });
    try {
      const message = (index: number) => ({ role: index % 2 === 0 ? 'assistant' : 'tool', content: `message ${index} `.padEnd(200, '.') });
      const messages: unknown[] = [];
      let storedCount = 0;
      for (let step = 0; step < 500; step++) {
        messages.push(message(messages.length), message(messages.length + 1));
        await stores.journal.commit({ conversationRef: 'conv_long', messages, storedCount, checkpoint: checkpoint(step, 'conv_long'), calls: [] });
        storedCount = messages.length;
      }
      const { rows } = await admin.query<{ start_index: number; bytes: number }>(
        `SELECT start_index, octet_length(messages) AS bytes FROM "${schema}".conversation_messages WHERE ref = 'conv_long' ORDER BY start_index`,
      );
      expect(rows).toHaveLength(500);
      // the chunk of the 500th step holds its two messages only, like the first step's
      expect(rows[499]).toEqual({ start_index: 998, bytes: JSON.stringify(messages.slice(998)).length });
      expect(rows[499]!.bytes).toBeLessThan(500);
      expect(await stores.conversations.get('conv_long')).toEqual(messages);
      // a step without new messages: an empty chunk at the end, replaced by the next one
      await stores.journal.commit({ conversationRef: 'conv_long', messages, storedCount, checkpoint: checkpoint(500, 'conv_long'), calls: [] });
      messages.push(message(1000));
      await stores.journal.commit({ conversationRef: 'conv_long', messages, storedCount, checkpoint: checkpoint(501, 'conv_long'), calls: [] });
      expect(await stores.conversations.get('conv_long')).toEqual(messages);
      const { rows: last } = await admin.query(
        `SELECT start_index, end_index FROM "${schema}".conversation_messages WHERE ref = 'conv_long' ORDER BY start_index DESC LIMIT 1`,
      );
      expect(last).toEqual([{ start_index: 1000, end_index: 1001 }]);
    } finally {
      await stores.close();
    }
  });

  it('sweeps expired conversations in batches off the write, keeping a conversation written since whose row lagged', async () => {
    const schema = newSchema();
    const clock = createFakeClock();
    const prepared = await createPostgresStores({ pool: admin, schema, clock });
    await prepared.close();
    const sweeps: Promise<void>[] = [];
    const quoted = `"${schema}"`;
    const { createPostgresRunStore } = await import('../src/stores/postgres/postgres-run-store.ts');
    const { createPostgresIdempotencyLedger } = await import('../src/stores/postgres/postgres-idempotency-ledger.ts');
    const runs = createPostgresRunStore(admin, { schema: quoted });
    const ledger = createPostgresIdempotencyLedger(admin, { schema: quoted, clock });
    const parts = createPostgresConversations(admin, {
      schema: quoted,
      clock,
      ttlMs: HOUR_MS,
      sweep: { intervalMs: 60_000, batchSize: 3 },
      onBackground: (work) => sweeps.push(work),
    });
    const conversations = parts.store;
    const claims = createPostgresClaimStore(admin, { schema: quoted, clock });
    const journal = createPostgresRunJournal(admin, { schema: quoted, clock, conversations: parts, runs, ledger, claims });
    const settle = async () => {
      while (sweeps.length > 0) await sweeps.shift();
    };
    await conversations.put('conv_first', [{ n: 0 }]); // the first write sweeps (nothing to sweep)
    await settle();
    for (let index = 0; index < 10; index++) await conversations.put(`conv_${index}`, [{ n: index }]);
    await conversations.put('conv_lagging', [{ n: 1 }]);
    await clock.advance(20_000);
    // appended 20 s later: the row's expiry (refreshed only when 36 s behind) stays at the put's
    await journal.commit({
      conversationRef: 'conv_lagging',
      messages: [{ n: 1 }, { n: 2 }],
      storedCount: 1,
      checkpoint: checkpoint(1, 'conv_lagging'),
      calls: [],
    });
    const headOf = async (ref: string) =>
      (await admin.query<{ expires_at_ms: string }>(`SELECT expires_at_ms FROM ${quoted}.conversations WHERE ref = $1`, [ref])).rows[0]?.expires_at_ms;
    const lagging = Number(await headOf('conv_lagging'));
    expect(sweeps).toHaveLength(0);
    await clock.advance(HOUR_MS - 20_000 + 5_000);
    expect(await conversations.get('conv_3')).toBeUndefined();
    expect(await conversations.get('conv_lagging')).toEqual([{ n: 1 }, { n: 2 }]);
    await conversations.put('conv_fresh', [{ n: 'fresh' }]);
    expect(sweeps).toHaveLength(1);
    await settle();
    const { rows: left } = await admin.query<{ ref: string }>(`SELECT ref FROM ${quoted}.conversations ORDER BY ref`);
    expect(left.map((row) => row.ref)).toEqual(['conv_fresh', 'conv_lagging']);
    const { rows: chunkRefs } = await admin.query<{ ref: string }>(`SELECT DISTINCT ref FROM ${quoted}.conversation_messages ORDER BY ref`);
    expect(chunkRefs.map((row) => row.ref)).toEqual(['conv_fresh', 'conv_lagging']);
    // the lagging row's expiry moved to its last chunk's
    expect(Number(await headOf('conv_lagging'))).toBe(lagging + 20_000);
    expect(await conversations.get('conv_lagging')).toEqual([{ n: 1 }, { n: 2 }]);
    // at most one sweep per interval
    await conversations.put('conv_again', []);
    expect(sweeps).toHaveLength(0);
  });
});
