/**
 * `toolrun dlq list --after ID`: keyset pages of a dead-letter queue, each starting after the last
 * id of the one before, that cover every entry once while entries are removed between pages.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { runToolrun } from '../src/cli/main.ts';
import type { DeadLetterQueue } from '../src/ground/ports/stores.ts';
import { createSqliteStores } from '../src/stores/sqlite/index.ts';

const directory = mkdtempSync(join(tmpdir(), 'toolrun-cli-after-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** Runs `toolrun ARGS` in this process, capturing stdout and stderr. */
async function toolrun(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  try {
    return { code: await runToolrun(['node', 'toolrun', ...args]), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

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
