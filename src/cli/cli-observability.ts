import type { Logger } from 'pino';
import type { Observability, ToolrunMetrics } from '../observability/index.ts';
import { createFailurePatternLibrary, createRedactor, type Redactor, type RedactorOptions, type ToolrunConfig } from '../index.ts';
import type { FailureLog } from '../observability/index.ts';
import { describeError } from './cli-error.ts';
import type { LogOptions } from './parse-options.ts';

/** Options of {@link createCliObservability}. */
export interface CliObservabilityOptions extends LogOptions {
  /** The loaded config: its runtime options are extended, never replaced. */
  config: ToolrunConfig;
  /** The failure log beside the stores (`ResolvedStores.openFailureLog`); none: no failure is recorded. */
  openFailureLog?: (() => FailureLog) | undefined;
  /** Instruments to feed (a `MetricsServer`'s); none: the global OpenTelemetry meter (a no-op unless the config registered an SDK). */
  metrics?: ToolrunMetrics | undefined;
  /** Where problems go. @defaultValue `process.stderr` */
  writeError?: (text: string) => void;
}

/** toolrun/otel wired for a command that runs agents (`worker`, `dlq replay`, `dlq drain`). */
export interface CliObservability {
  readonly observability: Observability;
  /**
   * The config's runtime options plus: the observer's `onCallEnd` (called before the config's own),
   * one redactor shared by the runtime and the observers (built from the config's `redact`), and
   * the default failure patterns when the config has none.
   */
  readonly runtimeOptions: NonNullable<ToolrunConfig['runtimeOptions']>;
  /** The redactor of the runtime and the observers (the config's `redact`): what the CLI prints of errors goes through it. */
  readonly redactor: Redactor;
  /** Whether failed calls are recorded in a failure log (for `toolrun report --db`). */
  readonly recordsFailures: boolean;
  /** Waits for the failure-log appends in flight. Call before the stores close. */
  flush(): Promise<void>;
}

function isRedactor(value: RedactorOptions | Redactor | undefined): value is Redactor {
  return typeof value === 'object' && value !== null && typeof (value as Redactor).text === 'function';
}

/**
 * Builds the observability of a CLI command from its options: failed calls, recoveries and breaker
 * openings go to the failure log when the backend keeps one (SQLite: the same file); one JSON log
 * line per tool call to stderr or `--log-file` when `--log-level` or `--log-file` is given, else no
 * log; spans on the global OpenTelemetry tracer (a no-op unless the config registered an SDK);
 * metrics on `metrics` when given. `toolrun/otel` is loaded here, on demand, so commands that run no
 * agent do not load it. Never throws into a call: a failed append is one line on stderr (the first
 * only).
 *
 * @throws Error when `--log-file` cannot be opened.
 */
export async function createCliObservability(options: CliObservabilityOptions): Promise<CliObservability> {
  const { createObservability } = await import('../observability/index.ts');
  const writeError = options.writeError ?? ((text: string) => void process.stderr.write(text));
  const configured = options.config.runtimeOptions;
  const redactor = isRedactor(configured?.redact) ? configured.redact : createRedactor(configured?.redact);
  let logger: Logger | false = false;
  if (options.logLevel !== undefined || options.logFile !== undefined) {
    const { pino, destination } = await import('pino');
    logger = pino({ name: 'toolrun', level: options.logLevel ?? 'info' }, destination({ dest: options.logFile ?? 2, sync: true, mkdir: true }));
  }
  const failureLog = options.openFailureLog?.();
  let appendErrors = 0;
  const observability = createObservability({
    logger,
    redactor,
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(failureLog ? { failureLog } : {}),
    onFailureLogError: (error) => {
      appendErrors += 1;
      if (appendErrors === 1) writeError(`toolrun: a failure record could not be written to the failure log (later ones not shown): ${describeError(error)}\n`);
    },
  });
  const configuredOnCallEnd = configured?.onCallEnd;
  return {
    observability,
    redactor,
    recordsFailures: failureLog !== undefined,
    runtimeOptions: {
      ...configured,
      redact: redactor,
      failurePatterns: configured?.failurePatterns ?? createFailurePatternLibrary(),
      onCallEnd: (record) => {
        observability.onCallEnd(record);
        configuredOnCallEnd?.(record);
      },
    },
    flush: () => observability.flush(),
  };
}
