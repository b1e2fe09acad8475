/**
 * `toolrun dlq list --after ID`: keyset pages of a dead-letter queue, each starting after the last
 * id of the one before, that cover every entry once while entries are removed between pages.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { toolrunInProcess } from './fixtures/toolrun-in-process.ts';
import type { DeadLetterQueue } from '../src/ground/ports/stores.ts';
import { createSqliteStores } from '../src/stores/sqlite/index.ts';

const directory = mkdtempSync(join(tmpdir(), 'toolrun-cli-after-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const toolrun = toolrunInProcess;

describe('toolrun dlq list --after', () => {
  it('pages by the last id shown, names the next page, and needs --dlq', async () => {
    const db = join(directory, 'after.db');
    const stores = createSqliteStores({ path: db });
    const toolDlq = stores.toolDlq as DeadLetterQueue<unknown>;
    const ids: string[] = [];
    for (let index = 0; index < 7; index += 1) {
      ids.push(await toolDlq.push({ kind: 'tool', runId: `run_${index}`, stepIndex: 1, toolName: 'book_flight', reason: 'circuit-open', attempts: 1 }));
    }
    await stores.close();

    const first = await toolrun(['dlq', 'list', '--dlq', 'tool', '--limit', '3', '--db', db]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`4 more (--dlq tool --after ${ids[2]}, or --offset 3)`);
    const page = async (after: string) =>
      JSON.parse((await toolrun(['dlq', 'list', '--dlq', 'tool', '--limit', '3', '--after', after, '--json', '--db', db])).stdout) as Array<{ id: string }>;
    const second = await page(ids[2]!);
    expect(second.map((record) => record.id)).toEqual(ids.slice(3, 6));
    // the last entry shown goes before the next page is asked for: the page still starts after it
    const reopened = createSqliteStores({ path: db });
    await reopened.toolDlq.remove(ids[5]!);
    await reopened.close();
    expect((await page(ids[5]!)).map((record) => record.id)).toEqual([ids[6]]);
    const last = await toolrun(['dlq', 'list', '--dlq', 'tool', '--limit', '3', '--after', ids[3]!, '--db', db]);
    expect(last.stdout).not.toContain('more (');

    const both = await toolrun(['dlq', 'list', '--after', ids[2]!, '--db', db]);
    expect(both.code).toBe(2);
    expect(both.stderr.trim().split('\n')).toEqual(['toolrun: error: --after takes an id of one queue: add --dlq message or --dlq tool']);
  });
});
