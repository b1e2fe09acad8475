import { describe, expect, it } from 'vitest';
import { createProgram } from '../src/cli/program.ts';
import { toolrunInProcess } from './fixtures/toolrun-in-process.ts';

/** What `toolrun mcp-proxy …` hands to the proxy: its own options, and the upstream command verbatim. */
async function parse(argv: string[]): Promise<{ upstream: string[]; db: unknown }> {
  const program = createProgram();
  const command = program.commands.find((candidate) => candidate.name() === 'mcp-proxy')!;
  let parsed: { upstream: string[]; db: unknown } | undefined;
  command.action((upstream: string[], options: Record<string, unknown>) => {
    parsed = { upstream, db: options.db };
  });
  await program.parseAsync(['node', 'toolrun', 'mcp-proxy', ...argv]);
  return parsed!;
}

describe('toolrun mcp-proxy arguments', () => {
  it('takes everything after -- verbatim, options of the upstream included', async () => {
    expect(await parse(['--db', 'proxy.db', '--', 'node', 'server.js', '--db', 'upstream.db'])).toEqual({
      upstream: ['node', 'server.js', '--db', 'upstream.db'],
      db: 'proxy.db',
    });
  });

  it('without --, passes the upstream options through from its first word (npx -y server)', async () => {
    expect(await parse(['--db', 'proxy.db', 'npx', '-y', '@modelcontextprotocol/server-memory'])).toEqual({
      upstream: ['npx', '-y', '@modelcontextprotocol/server-memory'],
      db: 'proxy.db',
    });
  });
});

describe('toolrun mcp-proxy --breaker-prefix', () => {
  it('refuses an empty prefix or one that is an option (exit 2, one line) before starting anything', async () => {
    for (const prefix of ['', '  ', '--', '-x']) {
      const { code, stderr } = await toolrunInProcess(['mcp-proxy', `--breaker-prefix=${prefix}`, '--', process.execPath, '-e', 'setTimeout(() => {}, 60000)']);
      expect(code).toBe(2);
      expect(stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(stderr).toMatch(/^toolrun: error: --breaker-prefix needs a non-empty name/);
    }
  });
});
