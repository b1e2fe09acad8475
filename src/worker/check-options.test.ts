import { describe, expect, it } from 'vitest';
import { createMemoryStores } from '../stores/memory/index.ts';
import { createToolrun } from './create-toolrun.ts';
import { createWorker } from './create-worker.ts';

const model = async () => ({ text: 'done', usage: { input: 1, output: 1 } });

describe('a stores bundle without a journal', () => {
  it('is refused at creation by createToolrun and createWorker, naming the port', () => {
    const { journal: _journal, ...withoutJournal } = createMemoryStores();
    expect(() => createToolrun({ model, tools: [], stores: withoutJournal as never })).toThrow(
      expect.objectContaining({
        code: 'INVALID_OPTIONS',
        message: expect.stringMatching(/^createToolrun: `stores` lacks `journal` \(pass a whole Stores bundle/),
      }),
    );
    expect(() => createWorker({ model, tools: [], stores: withoutJournal as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/^createWorker: `stores` lacks `journal`/) }),
    );
    expect(() => createWorker({ model, tools: [], stores: { ...withoutJournal, journal: null } as never })).toThrow(/lacks `journal`/);
  });
});
