/**
 * 200 runs on a real restate-server while the service process is SIGKILLed at random points of
 * its progress (its n-th model call, n seeded) and started again on the same port: every run ends in exactly one place — completed,
 * the tool DLQ or the message DLQ, the one its plan says — and each side effect happens at most
 * once per (run, step, call). Restate resumes each killed invocation from its journal.
 *
 * `RESTATE_CHAOS_REPORT=<file>` writes the measured numbers there as JSON.
 */
import { writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { startRestateHarness, type RestateHarness } from './fixtures/restate-harness.ts';
import { seededRandom } from './fixtures/distributed-processes.ts';

const RUN_COUNT = 200;
const SEED = 20_261_205;
/**
 * Each service process kills itself at its n-th model call, n drawn uniformly from this range: the
 * kills land mid-work, at points of progress, however fast or slow the machine is.
 */
const KILL_AFTER_MODEL_CALLS = [10, 50] as const;
/** No new model call and no run settled for this long is a hang: the test fails (in ms). */
const IDLE_MS = 60_000;

type Plan = { kind: 'effects'; count: number } | { kind: 'down' } | { kind: 'malformed' };
type Place = 'completed' | 'tool' | 'message';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function plans(random: () => number): Map<string, Plan> {
  const planned = new Map<string, Plan>();
  for (let index = 0; index < RUN_COUNT; index++) {
    const draw = random();
    const plan: Plan = draw < 0.08 ? { kind: 'malformed' } : draw < 0.16 ? { kind: 'down' } : { kind: 'effects', count: 1 + Math.floor(random() * 3) };
    planned.set(`chaos-${index}`, plan);
  }
  return planned;
}

function bodyOf(plan: Plan, runId: string): string {
  if (plan.kind === 'malformed') return `{not json ${runId}`;
  return JSON.stringify({ input: plan.kind === 'down' ? 'down' : `effects:${plan.count}` });
}

/** Where each run is now: every place it is found in (more than one is a failure). */
async function placesOf(harness: RestateHarness, runIds: readonly string[]): Promise<Map<string, Place[]>> {
  const places = new Map<string, Place[]>(runIds.map((runId) => [runId, []]));
  for (const record of await harness.stores.toolDlq.list({ limit: 10_000 })) places.get(record.entry.runId)?.push('tool');
  for (const record of await harness.stores.messageDlq.list({ limit: 10_000 })) {
    const runId = record.entry.messageId?.replace(/^restate:/, '');
    if (runId !== undefined) places.get(runId)?.push('message');
  }
  for (const runId of runIds) {
    const opened = await harness.stores.journal.open(runId);
    if (opened.claimed && opened.checkpoint?.status === 'completed') places.get(runId)!.push('completed');
  }
  return places;
}

describe('toolrun in Restate: the service process SIGKILLed at random over 200 runs', () => {
  let harness: RestateHarness | undefined;
  afterAll(async () => {
    await harness?.close();
  }, 30_000);

  it('every run in exactly one place; each side effect at most once per (run, step, call)', async () => {
    const started = Date.now();
    const random = seededRandom(SEED);
    const killPoint = () => KILL_AFTER_MODEL_CALLS[0] + Math.floor(random() * (KILL_AFTER_MODEL_CALLS[1] - KILL_AFTER_MODEL_CALLS[0]));
    harness = await startRestateHarness({ workMs: 40, breakerThreshold: 1_000_000, killAtModelCall: killPoint() });
    const planned = plans(random);
    const runIds = [...planned.keys()];
    await Promise.all(runIds.map((runId) => harness!.send(runId, bodyOf(planned.get(runId)!, runId))));

    let kills = 0;
    let places = await placesOf(harness, runIds);
    const settled = () => [...places.values()].every((found) => found.length > 0);
    const progressOf = async () =>
      (await harness!.count(`SELECT count(*) FROM $schema.model_calls`)) + [...places.values()].filter((found) => found.length > 0).length;
    let progress = await progressOf();
    let progressAt = Date.now();
    while (!settled()) {
      while (harness.service().alive && !settled()) {
        await sleep(250);
        places = await placesOf(harness, runIds);
        const now = await progressOf();
        if (now > progress) [progress, progressAt] = [now, Date.now()];
        else if (Date.now() - progressAt > IDLE_MS) throw new Error(`no progress for ${IDLE_MS} ms after ${kills} kills (a hang?)`);
      }
      if (harness.service().alive) break;
      // the process killed itself at its kill point: start the next one with its own
      await harness.service().exited;
      kills += 1;
      if (!settled()) await harness.restart({ killAtModelCall: killPoint() });
    }
    places = await placesOf(harness, runIds);
    const elapsedMs = Date.now() - started;

    const expected = (plan: Plan): Place => (plan.kind === 'malformed' ? 'message' : plan.kind === 'down' ? 'tool' : 'completed');
    const misplaced = runIds.filter((runId) => places.get(runId)!.join() !== expected(planned.get(runId)!));
    const doubledEffects = await harness.count(
      `SELECT count(*) FROM (SELECT idempotency_key FROM $schema.side_effects GROUP BY idempotency_key HAVING count(*) > 1) AS doubled`,
    );
    const effects = await harness.count(`SELECT count(*) FROM $schema.side_effects`);
    const plannedEffects = [...planned.values()].reduce((sum, plan) => sum + (plan.kind === 'effects' ? plan.count : 0), 0);
    const repeatedExecutions = await harness.count(
      `SELECT count(*) FROM (SELECT idempotency_key FROM $schema.tool_invocations WHERE tool = 'record_effect' GROUP BY idempotency_key HAVING count(*) > 1) AS repeated`,
    );
    const repeatedModelSteps = await harness.count(
      `SELECT count(*) FROM (SELECT run_id, step_index FROM $schema.model_calls GROUP BY run_id, step_index HAVING count(*) > 1) AS repeated`,
    );
    const report = {
      runs: RUN_COUNT,
      kills,
      elapsedMs,
      misplaced: misplaced.length,
      effects,
      plannedEffects,
      doubledEffects,
      repeatedToolExecutions: repeatedExecutions,
      repeatedModelSteps,
      toolDlq: (await harness.stores.toolDlq.list({ limit: 10_000 })).length,
      messageDlq: (await harness.stores.messageDlq.list({ limit: 10_000 })).length,
    };
    if (process.env.RESTATE_CHAOS_REPORT) writeFileSync(process.env.RESTATE_CHAOS_REPORT, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`restate chaos: ${JSON.stringify(report)}`);

    expect(misplaced.map((runId) => `${runId}: ${places.get(runId)!.join('+') || 'nowhere'}`)).toEqual([]);
    expect(doubledEffects).toBe(0);
    expect(effects).toBe(plannedEffects);
    expect(kills).toBeGreaterThanOrEqual(3);
    // a hang fails by the progress bound above; this timeout is only a backstop
  }, 900_000);
});
