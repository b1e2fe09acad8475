import { describe, expect, it } from 'vitest';
import { resolveToolrunConfig } from './worker-config.ts';

describe('a config factory that fails', () => {
  it('is reported as INVALID_CONFIG with its message redacted (it often quotes what it read)', async () => {
    const factory = () => {
      throw new Error('boom with sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcd and user@example.com');
    };
    const failure = await resolveToolrunConfig(factory, { env: {} }, 'toolrun.config.ts').catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringContaining('toolrun.config.ts: the config factory failed: boom with') });
    expect(String((failure as Error).message)).not.toMatch(/sk-proj-ABC|user@example\.com/);
  });
});
