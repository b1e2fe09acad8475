/**
 * Redaction of adversarial text (test/observability-redaction-inputs.ts: one or more inputs per
 * secret family, built to make a backtracking rule retry from every position) and of clean text:
 * the time to redact 1 MB in one call, against 1,000 calls on 1 KB of the same input. Linear rules
 * give a ratio near 1; a quadratic one gives ~1,000. The redactor scans the whole megabyte here
 * (`maxScanBytes: Infinity`); by default it cuts at 64 KiB first (last rows).
 */
import { createRedactor } from '../src/core/redact.ts';
import { ADVERSARIAL_INPUTS } from '../test/observability-redaction-inputs.ts';
import type { BenchRow } from './measure.ts';

const MEGABYTE = 1_000_000;
const KILOBYTE = 1000;

/** Median wall time of `runs` runs of `operation`, in nanoseconds, after one warm-up run. */
function medianNs(operation: () => void, runs: number): number {
  operation();
  const samples: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const start = process.hrtime.bigint();
    operation();
    samples.push(Number(process.hrtime.bigint() - start));
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

const ms = (ns: number) => `${(ns / 1e6).toFixed(1)} ms`;

export async function runRedactionBench(): Promise<BenchRow[]> {
  const whole = createRedactor({ maxScanBytes: Number.POSITIVE_INFINITY });
  const rows: BenchRow[] = [];
  for (const [name, make] of Object.entries(ADVERSARIAL_INPUTS)) {
    const large = make(MEGABYTE);
    const small = make(KILOBYTE);
    const largeNs = medianNs(() => void whole.text(large), 7);
    const smallNs = medianNs(() => {
      for (let index = 0; index < 1000; index += 1) whole.text(small);
    }, 7);
    rows.push({ name: `${name}, 1 MB`, medianNs: largeNs, baseline: '1 KB × 1,000', ratio: largeNs / smallNs, note: `1 KB × 1,000: ${ms(smallNs)}` });
  }
  const byDefault = createRedactor();
  const oneAt = ADVERSARIAL_INPUTS['email: one @ after word characters']!(MEGABYTE);
  rows.push({ name: 'default redactor (cut at 64 KiB), 1 MB with one @', medianNs: medianNs(() => void byDefault.text(oneAt), 9) });
  // The former e-mail rule, for scale: quadratic, so only 20 KB.
  const former = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;
  const twentyKb = ADVERSARIAL_INPUTS['email: one @ after word characters']!(20_000);
  rows.push({
    name: 'former e-mail rule (backtracking), 20 KB with one @',
    medianNs: medianNs(() => void twentyKb.replace(former, '***'), 3),
    note: 'quadratic: 1 MB would take ~2,500× longer',
  });
  rows.push({ name: 'scanner, 20 KB with one @', medianNs: medianNs(() => void whole.text(twentyKb), 9) });
  return rows;
}
