import type { FailureLog, FailureLogRecord } from '../ground/ports/failure-log.ts';
import { createRedactor, type Redactor } from '../core/redact.ts';
import type { ToolCallRecord } from '../core/tool-call-record.ts';
import { toEventLogRecord, toToolFailureLogRecord } from './failure-record.ts';
import type { ToolrunObservation, ToolrunObserver } from './observation.ts';

/** Options of {@link createFailureRecorder}. */
export interface FailureRecorderOptions {
  /** Where records go (`createMemoryFailureLog`, `createSqliteFailureLog`). */
  failureLog: FailureLog;
  /** The redactor of every value recorded. Pass the runtime's. @defaultValue `createRedactor()` */
  redactor?: Redactor;
  /** An append that failed (the record is lost; the call it describes is not affected). */
  onError?: (error: unknown, record: FailureLogRecord) => void;
}

/**
 * Appends what `toolrun report` reads to a {@link FailureLog}: a `tool-failure` record per failed
 * call (redacted, bounded, no arguments), `recovery` records and `breaker-open` records. Appends
 * run in the background, in order; `flush()` waits for those in flight. Never throws.
 */
export interface FailureRecorder extends ToolrunObserver {
  /** Pass as the runtime's `onCallEnd` when used alone (no step index). */
  onCallEnd(record: ToolCallRecord): void;
  /** Resolves when every append started so far has settled. */
  flush(): Promise<void>;
}

/** Creates a {@link FailureRecorder}. */
export function createFailureRecorder(options: FailureRecorderOptions): FailureRecorder {
  const redactor = options.redactor ?? createRedactor();
  let tail: Promise<void> = Promise.resolve();

  const append = (record: FailureLogRecord) => {
    tail = tail
      .then(() => options.failureLog.append(record))
      .catch((error: unknown) => {
        try {
          options.onError?.(error, record);
        } catch {
          // the error channel must not break the chain
        }
      });
  };

  const observe = (observation: ToolrunObservation): void => {
    try {
      if (observation.kind === 'tool-call') {
        const record = toToolFailureLogRecord(observation.record, observation.stepIndex, redactor);
        if (record) append(record);
      } else if (observation.kind === 'recovery' || observation.kind === 'breaker-open') {
        append(toEventLogRecord(observation, redactor));
      }
    } catch {
      // recording must never break a call
    }
  };

  return {
    observe,
    onCallEnd: (record) => observe({ kind: 'tool-call', record, stepIndex: null }),
    flush: () => tail,
  };
}
