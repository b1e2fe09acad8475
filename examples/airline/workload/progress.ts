/**
 * Progress of a worker phase for a person: a `cli-progress` bar when the output is a terminal,
 * plain lines every few seconds otherwise (CI logs, pipes).
 */
import cliProgress from 'cli-progress';

/** Counts shown next to the bar. */
export interface ProgressCounts {
  completed: number;
  toolDlq: number;
  messageDlq: number;
}

/** A progress display; `stop()` must be called once at the end. */
export interface ProgressReporter {
  /** `done` messages handled of `total` (the total may grow as conversations release runs). */
  update(done: number, total: number, counts: ProgressCounts): void;
  stop(): void;
}

/** Options of {@link createProgressReporter}. */
export interface ProgressOptions {
  label: string;
  /** Where the bar is drawn. @defaultValue `process.stderr` */
  stream?: NodeJS.WriteStream;
  /** Plain lines go here when the stream is not a terminal. @defaultValue `console.log` */
  log?: (line: string) => void;
  /** Minimum time between two plain lines, in ms. @defaultValue 3000 */
  lineIntervalMs?: number;
  /** Draw nothing at all (tests). @defaultValue false */
  silent?: boolean;
}

function describeCounts(counts: ProgressCounts): string {
  return `completed ${counts.completed} · tool DLQ ${counts.toolDlq} · message DLQ ${counts.messageDlq}`;
}

/** Creates the bar (terminal) or the line printer (anything else). */
export function createProgressReporter(options: ProgressOptions): ProgressReporter {
  if (options.silent) return { update: () => undefined, stop: () => undefined };
  const stream = options.stream ?? process.stderr;
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      { format: `${options.label} [{bar}] {value}/{total} messages · {counts}`, stream, hideCursor: true, clearOnComplete: false, barsize: 30 },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    return {
      update(done, total, counts) {
        if (!started) {
          bar.start(total, done, { counts: describeCounts(counts) });
          started = true;
          return;
        }
        bar.setTotal(total);
        bar.update(done, { counts: describeCounts(counts) });
      },
      stop: () => {
        if (started) bar.stop();
      },
    };
  }
  const log = options.log ?? ((line: string) => console.log(line));
  const intervalMs = options.lineIntervalMs ?? 3_000;
  let lastLineAt = Date.now();
  let last: { done: number; total: number; counts: ProgressCounts } | undefined;
  return {
    update(done, total, counts) {
      last = { done, total, counts };
      if (Date.now() - lastLineAt < intervalMs) return;
      lastLineAt = Date.now();
      log(`${options.label} ${done}/${total} messages · ${describeCounts(counts)}`);
    },
    stop() {
      if (last !== undefined) log(`${options.label} ${last.done}/${last.total} messages · ${describeCounts(last.counts)} (done)`);
    },
  };
}
