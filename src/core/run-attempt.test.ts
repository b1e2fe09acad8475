import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../testing/fake-clock.ts';
import type { ToolContext } from './define-tool.ts';
import { runAttempt } from './run-attempt.ts';

const ids = { callId: 'c1', sessionId: 's1', runId: undefined, idempotencyKey: 's1:c1', attempt: 1 };
const run = (execute: (args: unknown, context: ToolContext) => unknown, callerSignal?: AbortSignal) =>
  runAttempt(execute, { a: 1 }, ids, { timeoutMs: 1000, clock: createFakeClock(0), callerSignal });

describe('runAttempt', () => {
  it("the tool's context shows the ToolContext fields and nothing of the attempt's machinery", async () => {
    let seen: ToolContext | undefined;
    await run((_args, context) => {
      seen = context;
      return 1;
    });
    expect(Object.keys(seen!).sort()).toEqual(['attempt', 'callId', 'idempotencyKey', 'runId', 'sessionId']);
    expect({ ...seen }).toEqual(ids);
    expect((seen as unknown as Record<string, unknown>).run).toBeUndefined();
    expect((seen as unknown as Record<string, unknown>).start).toBeUndefined();
    // read after the attempt settled, the signal is aborted: the work is over
    expect(seen!.signal.aborted).toBe(true);
  });

  it('a plain value, a promise, a foreign thenable and a throw each settle the attempt', async () => {
    expect(await run(() => 'plain')).toEqual({ ok: true, value: 'plain' });
    expect(await run(async (args) => args)).toEqual({ ok: true, value: { a: 1 } });
    expect(await run(() => ({ then: (resolve: (value: unknown) => void) => resolve('thenable') }))).toEqual({ ok: true, value: 'thenable' });
    const error = new Error('boom');
    expect(
      await run(() => {
        throw error;
      }),
    ).toEqual({ ok: false, thrown: error, abortReason: undefined });
    expect(await run(() => Promise.reject(error))).toEqual({ ok: false, thrown: error, abortReason: undefined });
  });

  it('a tool that ignores its signal is given up at timeoutMs, and its signal is aborted with a TimeoutError', async () => {
    const clock = createFakeClock(0);
    let signal: AbortSignal | undefined;
    const pending = runAttempt(
      (_args, context) => {
        signal = context.signal;
        return new Promise(() => undefined);
      },
      {},
      ids,
      { timeoutMs: 250, clock, callerSignal: undefined },
    );
    await Promise.resolve();
    await Promise.resolve();
    await clock.advance(249);
    expect(signal!.aborted).toBe(false);
    await clock.advance(1);
    const outcome = await pending;
    expect(outcome).toMatchObject({ ok: false, abortReason: 'timeout' });
    expect(signal!.aborted).toBe(true);
    expect((signal!.reason as DOMException).name).toBe('TimeoutError');
  });

  it("the caller's abort settles the attempt as cancelled; after a settled attempt it changes nothing", async () => {
    const caller = new AbortController();
    const pending = run(() => new Promise(() => undefined), caller.signal);
    caller.abort(new Error('stop'));
    expect(await pending).toMatchObject({ ok: false, abortReason: 'cancelled', thrown: { message: 'stop' } });

    const later = new AbortController();
    expect(await run(() => 'done', later.signal)).toEqual({ ok: true, value: 'done' });
    later.abort();
    const aborted = new AbortController();
    aborted.abort(new Error('already'));
    let ran = false;
    expect(
      await run(() => {
        ran = true;
      }, aborted.signal),
    ).toMatchObject({ ok: false, abortReason: 'cancelled' });
    expect(ran).toBe(false);
  });
});
