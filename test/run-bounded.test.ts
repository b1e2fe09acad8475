/** The bound the reliability scenarios run under: it follows progress, not the clock. */
import { describe, expect, it } from 'vitest';
import { runBounded } from './support/run-bounded.ts';

const FIXTURES = new URL('./fixtures/bounded-fixtures.ts', import.meta.url).href;

describe('runBounded with a bound that follows progress', () => {
  it('lets a run that keeps making progress go on past its idle bound', async () => {
    const outcome = await runBounded<string>(FIXTURES, 'slowButProgressing', { ms: 1_500, stepMs: 50 }, { idleMs: 500, maxSteps: 1_000 });
    expect(outcome).toMatchObject({ ok: true, value: 'done' });
    expect(outcome.ok && outcome.steps).toBeGreaterThan(10);
  });

  it('ends a run that makes more steps than its work bound as a loop', async () => {
    const outcome = await runBounded(FIXTURES, 'loopsForever', undefined, { idleMs: 10_000, maxSteps: 2_000 });
    expect(outcome).toMatchObject({ ok: false, reason: 'runaway' });
    expect(!outcome.ok && outcome.reason === 'runaway' && outcome.steps).toBeGreaterThan(2_000);
  });

  it('ends a run that stops making progress as a hang, after its idle bound', async () => {
    const outcome = await runBounded(FIXTURES, 'hangsAfterOneStep', undefined, { idleMs: 300, maxSteps: 1_000 });
    expect(outcome).toMatchObject({ ok: false, reason: 'timeout' });
  });
});
