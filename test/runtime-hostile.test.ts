/**
 * The tool runtime against input that used to hang it: a catastrophic schema pattern, a tool that
 * calls the runtime on itself, a tool that never lets the event loop turn, 1 MB adversarial error
 * text. Each runs in a worker thread under a hard time bound (runBounded), so a regression fails in
 * bounded time instead of freezing the suite. The bounds are generous (the work takes milliseconds
 * to a second); without the guards these runs do not finish at all.
 */
import { describe, expect, it } from 'vitest';
import { runBounded } from './support/run-bounded.ts';
import { SANITISE_SHAPES } from './runtime-hostile.fixtures.ts';

const FIXTURES = new URL('./runtime-hostile.fixtures.ts', import.meta.url).href;

describe('a schema pattern with nested quantifiers', () => {
  for (const length of [30, 100_000]) {
    it(`^(a+)+$ against ${length} "a" and a "!" fails validation at once (INVALID_FORMAT at /code, tool not run)`, async () => {
      const outcome = await runBounded<{ status: string; code: string; fields: string[]; executed: number }>(
        FIXTURES,
        'catastrophicPattern',
        { length },
        20_000,
      );
      expect(outcome).toMatchObject({ ok: true, value: { status: 'failed', code: 'INVALID_FORMAT', fields: ['/code'], executed: 0 } });
    }, 30_000);
  }
});

describe('a tool that calls the runtime on itself', () => {
  for (const mode of ['sync', 'async'] as const) {
    it(`(${mode}) ends with a CALL_LIMIT_EXCEEDED failure envelope after exactly maxInFlightCalls executions`, async () => {
      const outcome = await runBounded<{ status: string; code: string; executions: number; bytes: number }>(
        FIXTURES,
        'selfRecursion',
        { mode, maxInFlightCalls: 200 },
        20_000,
      );
      expect(outcome).toMatchObject({ ok: true, value: { status: 'failed', code: 'CALL_LIMIT_EXCEEDED' } });
      if (!outcome.ok) return;
      // The 201st nested call is refused before its tool runs; every level above fails with it.
      expect(outcome.value.executions).toBe(200);
      expect(outcome.value.bytes).toBeLessThanOrEqual(16_384);
    }, 30_000);
  }

  it('with the default limit (1,000 calls in flight) ends too, without exhausting the heap', async () => {
    const outcome = await runBounded<{ status: string; code: string; executions: number; heapMb: number }>(
      FIXTURES,
      'selfRecursion',
      { mode: 'async' },
      30_000,
    );
    expect(outcome).toMatchObject({ ok: true, value: { status: 'failed', code: 'CALL_LIMIT_EXCEEDED', executions: 1000 } });
  }, 40_000);
});

describe('a tool that never lets the event loop turn', () => {
  it('calling another tool in an endless loop: its timeoutMs fires (TIMEOUT) and other timers run meanwhile', async () => {
    const outcome = await runBounded<{ status: string; code: string; nestedCalls: number; timerFired: boolean }>(
      FIXTURES,
      'endlessNestedLoop',
      { timeoutMs: 200 },
      20_000,
    );
    expect(outcome).toMatchObject({ ok: true, value: { status: 'failed', code: 'TIMEOUT', timerFired: true } });
    if (!outcome.ok) return;
    // More than one turn's worth of executions ran before the timeout: the loop was really starving it.
    expect(outcome.value.nestedCalls).toBeGreaterThan(256);
  }, 30_000);
});

describe('sanitiseErrorText on 1 MB of adversarial text', () => {
  it(`finishes for every shape (${SANITISE_SHAPES.join(', ')}) within one bound`, async () => {
    const outcome = await runBounded<Record<string, number>>(FIXTURES, 'sanitiseAllAdversarial', undefined, 20_000);
    expect(outcome).toMatchObject({ ok: true });
    if (!outcome.ok) return;
    expect(Object.keys(outcome.value)).toEqual([...SANITISE_SHAPES]);
    // The 1 MB of frame lines and the Go dump are stack traces and nothing else: nothing is left.
    expect(outcome.value['frame-lines']).toBe(0);
    expect(outcome.value['go-dump']).toBe(0);
  }, 30_000);
});
