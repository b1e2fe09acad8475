/** examples/dbos/dead-letter-and-replay.ts runs against the local PostgreSQL and prints what it measured. */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

describe('examples/dbos/dead-letter-and-replay.ts', () => {
  it('dead-letters the exhausted run once, replays it through the DBOS fork, and applies the write once', () => {
    const example = fileURLToPath(new URL('../../examples/dbos/dead-letter-and-replay.ts', import.meta.url));
    const output = execFileSync(process.execPath, ['--import', 'tsx', example], { encoding: 'utf8', timeout: 120_000, stdio: ['ignore', 'pipe', 'ignore'] });
    const lines = output.trim().split('\n');
    expect(JSON.parse(lines[lines.length - 1]!)).toEqual({ engine: 'dbos', dlqEntries: 1, messageDlqEntries: 0, replayStatus: 'completed', sideEffects: 1 });
    // the two replays at once: one ran the fork, the other found the run claimed; the model ran only for the remaining step
    expect(output).toMatch(
      /replays: (in_progress, completed|completed, in_progress|completed, already_completed|already_completed, completed); model calls for the remaining steps: 1/,
    );
  }, 150_000);
});
