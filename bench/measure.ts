/** One row of a benchmark table. */
export interface BenchRow {
  name: string;
  /** Median nanoseconds per operation over the batches. */
  medianNs: number;
  /** The row this one is compared with, and the ratio medianNs / baseline. */
  baseline?: string;
  ratio?: number;
  note?: string;
}

/**
 * Median time per operation of `operation`, measured in `batches` batches of `batchSize` awaited
 * calls after a warm-up, in nanoseconds.
 */
export async function measure(operation: () => unknown, options: { batches?: number; batchSize?: number; warmup?: number } = {}): Promise<number> {
  const batches = options.batches ?? 30;
  const batchSize = options.batchSize ?? 2000;
  for (let index = 0; index < (options.warmup ?? 5000); index++) await operation();
  const perOperation: number[] = [];
  for (let batch = 0; batch < batches; batch++) {
    const start = process.hrtime.bigint();
    for (let index = 0; index < batchSize; index++) await operation();
    perOperation.push(Number(process.hrtime.bigint() - start) / batchSize);
  }
  perOperation.sort((a, b) => a - b);
  return perOperation[Math.floor(perOperation.length / 2)]!;
}

/** Prints rows as a Markdown table. */
export function printTable(title: string, rows: readonly BenchRow[]): void {
  console.log(`\n### ${title}\n`);
  console.log('| case | median per op | vs | ratio |');
  console.log('|---|---:|---|---:|');
  for (const row of rows) {
    const time =
      row.medianNs === 0
        ? '—'
        : row.medianNs >= 1e6
          ? `${(row.medianNs / 1e6).toFixed(2)} ms`
          : row.medianNs >= 1e3
            ? `${(row.medianNs / 1e3).toFixed(2)} µs`
            : `${row.medianNs.toFixed(0)} ns`;
    console.log(
      `| ${row.name}${row.note ? ` (${row.note})` : ''} | ${time} | ${row.baseline ?? ''} | ${row.ratio !== undefined ? row.ratio.toFixed(2) : ''} |`,
    );
  }
}
