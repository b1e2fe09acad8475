/**
 * `toolrun eval` offline: the scripted model on the first τ-bench airline tasks against the local
 * airline HTTP service, through the real command (in process), twice with the same seed.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { runToolrun } from '../src/cli/main.ts';
import { crc32, PNG_SIGNATURE } from '../src/eval/raster-png.ts';
import type { EvalResults } from '../src/eval/run-eval.ts';
import { airlineDataPresent } from './fixtures/airline-test-workload.ts';

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

async function runEvalCommand(seed: number, faultsPerTask = 2): Promise<{ code: number; out: string; results: EvalResults }> {
  const out = mkdtempSync(join(tmpdir(), 'toolrun-eval-'));
  folders.push(out);
  const argv = [
    'node',
    'toolrun',
    'eval',
    '--model',
    'scripted',
    '--tasks',
    '4',
    '--seed',
    String(seed),
    '--out',
    out,
    '--retry-after-s',
    '0',
    '--tool-timeout-ms',
    '300',
    '--faults-per-task',
    String(faultsPerTask),
  ];
  const code = await runToolrun(argv);
  return { code, out, results: JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as EvalResults };
}

/** The chunks of a PNG, each CRC checked; throws on a malformed file. */
function pngChunks(bytes: Buffer): Array<{ type: string; data: Buffer }> {
  expect(bytes.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
  const chunks: Array<{ type: string; data: Buffer }> = [];
  let at = 8;
  while (at < bytes.length) {
    const length = bytes.readUInt32BE(at);
    const type = bytes.subarray(at + 4, at + 8).toString('latin1');
    const data = bytes.subarray(at + 8, at + 8 + length);
    expect(bytes.readUInt32BE(at + 8 + length)).toBe(crc32(bytes.subarray(at + 4, at + 8 + length)));
    chunks.push({ type, data });
    at += 12 + length;
  }
  return chunks;
}

describe.skipIf(!airlineDataPresent)('toolrun eval --model scripted (4 τ-bench airline tasks)', () => {
  it('runs the three arms on the same tasks and faults, applies no write twice, and is deterministic under one seed', { timeout: 120_000 }, async () => {
    const first = await runEvalCommand(7);
    const second = await runEvalCommand(7);
    expect(first.code).toBe(0);
    const { results } = first;
    expect(results.tasks).toHaveLength(4);
    expect(results.arms.map((arm) => arm.arm)).toEqual(['sdk-default', 'toolrun', 'toolrun-policies']);
    // the same seed gives the same plan, outcomes and numbers
    expect(second.results).toEqual(results);
    // every arm met the same planned faults; the faults that happened are the plan's
    expect(results.plans.flatMap((plan) => plan.faults)).toHaveLength(8);
    for (const arm of results.arms) {
      expect(arm.duplicatedWrites).toBe(0);
      expect(arm.tasks).toBe(4);
      expect(arm.taskSuccess.low).toBeLessThanOrEqual(arm.taskSuccess.estimate);
      expect(arm.taskSuccess.high).toBeGreaterThanOrEqual(arm.taskSuccess.estimate);
    }
    // the arms differ only in what the model read: without faults every arm makes the same calls
    // and solves every task; with faults the arms read different texts and end differently
    const faultFree = (await runEvalCommand(7, 0)).results;
    for (const arm of faultFree.arms) {
      expect(arm.successes).toBe(4);
      expect(arm.toolCalls).toBe(faultFree.arms[0]!.toolCalls);
      expect(arm.modelCalls).toBe(faultFree.arms[0]!.modelCalls);
      expect(arm.wastedCallsPerTask.estimate).toBe(0);
    }
    expect(new Set(results.arms.map((arm) => `${arm.successes}/${arm.recoveredFaults}/${arm.toolCalls}`)).size).toBeGreaterThan(1);
    // with retries on, the transient faults (503, 429, timeout) are recovered without the model
    const policies = results.arms.find((arm) => arm.arm === 'toolrun-policies')!;
    for (const kind of ['unavailable', 'rate_limit', 'timeout'] as const) expect(policies.byFault[kind].recovered).toBe(policies.byFault[kind].fired);

    const markdown = readFileSync(join(first.out, 'results.md'), 'utf8');
    expect(markdown).toContain('| arm (what the model reads) |');
    expect(markdown).toContain('ai 6.0.326');
    const png = readFileSync(join(first.out, 'plot.png'));
    const chunks = pngChunks(png);
    expect(chunks.map((chunk) => chunk.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
    const header = chunks[0]!.data;
    const [width, height] = [header.readUInt32BE(0), header.readUInt32BE(4)];
    expect(inflateSync(chunks[1]!.data)).toHaveLength(height * (1 + width * 3));
    expect(png.equals(readFileSync(join(second.out, 'plot.png')))).toBe(true);
  });
});
