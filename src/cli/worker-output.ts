import { ToolrunError, type FailureCause, type HandleMessageResult, type Redactor, type WorkerEvent } from '../index.ts';
import { describeError } from './cli-error.ts';
import { formatCounts, formatDeadLetterAdd, formatWorkerEvent, printJson, printLine, type DeadLetterDetails } from './format.ts';

type DeadLetterAddEvent = Extract<WorkerEvent, { type: 'dead-letter-add' }>;

/** The tool-DLQ kinds the summary counts. */
export type ToolDlqKind = 'tool' | 'model' | 'run';

/** Where the handled messages went (each handled message is counted once). */
export interface WorkerPlacements {
  /** Runs that completed. */
  completed: number;
  /** Runs dead-lettered in the tool DLQ, resumable, per entry kind. */
  toolDlq: Record<ToolDlqKind, number>;
  /** Messages dead-lettered in the message DLQ (rejected bodies, poison messages whose run never started). */
  messageDlq: number;
  /** Runs that ended another way, per status (`max_steps`, `deadline_exceeded`, `cancelled`). */
  other: Record<string, number>;
}

/** Where one handled message went: `null` for a completed run or another ending, else the DLQ and the entry's kind. */
export function deadLetterOf(result: HandleMessageResult): { queue: 'message' | 'tool'; kind: 'message' | ToolDlqKind } | null {
  switch (result.status) {
    case 'rejected':
      return { queue: 'message', kind: 'message' };
    case 'delivery_limit_exceeded':
      return result.queue === 'tool' ? { queue: 'tool', kind: 'run' } : { queue: 'message', kind: 'message' };
    case 'tool_failed':
      return { queue: 'tool', kind: 'tool' };
    case 'model_failed':
      return { queue: 'tool', kind: 'model' };
    default:
      return null;
  }
}

/** Options of {@link createWorkerOutput}. */
export interface WorkerOutputOptions {
  /** `--json`: every event and result as a JSON line on stdout. */
  json: boolean;
  /** What every error text printed goes through (the config's redactor). */
  redactor: Redactor;
  /** The worker's delivery bound, to tell a dead-letter that failed from a plain redelivery. */
  maxDeliveries: number;
  /** Lines for stdout. @defaultValue `printLine` */
  writeLine?: (line: string) => void;
  /** Lines for stderr (warnings). @defaultValue `process.stderr` */
  writeError?: (line: string) => void;
  /** Print every error the worker reports, with its stack (`TOOLRUN_DEBUG=1`). */
  debug?: boolean;
}

/** What {@link createWorkerOutput} returns: the worker's callbacks and its closing summary. */
export interface WorkerOutput {
  onEvent(event: WorkerEvent): void;
  onResult(result: HandleMessageResult): void;
  onError(error: unknown): void;
  readonly placements: WorkerPlacements;
  /** Prints the dead letters whose message's result was never reported (its acknowledgement failed). */
  flush(): void;
  /** The summary lines (text) or the summary object's `placed` field (JSON). */
  summaryLines(handled: number, byStatus: Record<string, number>, failedDeliveries: number): string[];
}

/** Events printed on stderr as warnings (text output); every other event goes to stdout. */
const STDERR_EVENTS: ReadonlySet<WorkerEvent['type']> = new Set(['delivery-failed', 'delivery-limit-exceeded', 'lease-lost']);

/** An error's message on one line (a `ToolrunError`'s as the CLI prints it); never throws. */
function errorText(error: unknown): string {
  try {
    return ToolrunError.is(error) ? describeError(error) : error instanceof Error ? error.message.replaceAll('\n', ' ') : String(error);
  } catch {
    return 'an unreadable error';
  }
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/**
 * The text (or JSON) output of `toolrun worker`: one line per event; for every dead letter one line
 * with its queue, kind, reason, run, tool or model, and the last error (redacted, one line); the
 * warnings (`delivery-failed`, `delivery-limit-exceeded`, `lease-lost`) on stderr; and a summary
 * that counts where the messages went.
 */
export function createWorkerOutput(options: WorkerOutputOptions): WorkerOutput {
  const writeLine = options.writeLine ?? printLine;
  const writeError = options.writeError ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const redact = (text: string) => options.redactor.text(text.slice(0, 4096));
  const placements: WorkerPlacements = { completed: 0, toolDlq: { tool: 0, model: 0, run: 0 }, messageDlq: 0, other: {} };
  /** dead-letter-add events waiting for their message's result (which holds the last error). */
  const pending = new Map<string, DeadLetterAddEvent>();
  /** The last error of each poison message, from its `delivery-limit-exceeded` event. */
  const poison = new Map<string, { error: string; deliveries: number }>();
  let lastError: string | undefined;

  const keyOf = (messageId: string | undefined, runId: string | null | undefined) =>
    messageId !== undefined ? `message:${messageId}` : runId ? `run:${runId}` : undefined;

  const printDeadLetter = (event: DeadLetterAddEvent, details: DeadLetterDetails) => writeLine(formatDeadLetterAdd(event, details));

  function detailsOf(result: HandleMessageResult): DeadLetterDetails {
    const lastErrorText = (error: FailureCause) => `${error.kind}${error.status !== null ? ` ${error.status}` : ''}: ${error.message}`;
    switch (result.status) {
      case 'rejected':
        return { kind: 'message', error: redact(result.reason.detail) };
      case 'delivery_limit_exceeded': {
        const seen = result.messageId !== undefined ? poison.get(result.messageId) : undefined;
        if (result.messageId !== undefined) poison.delete(result.messageId);
        return { kind: result.queue === 'tool' ? 'run' : 'message', deliveries: result.deliveries, ...(seen ? { error: redact(seen.error) } : {}) };
      }
      case 'tool_failed':
        return { kind: 'tool', ...(result.toolFailure ? { error: redact(lastErrorText(result.toolFailure.lastError)) } : {}) };
      case 'model_failed':
        return { kind: 'model', ...(result.modelFailure ? { error: redact(lastErrorText(result.modelFailure.lastError)) } : {}) };
      default:
        return {};
    }
  }

  return {
    placements,
    onEvent(event) {
      if (options.json) {
        printJson({ type: 'event', event });
        return;
      }
      if (event.type === 'dead-letter-add') {
        const key = keyOf(event.messageId, event.runId);
        if (key === undefined) printDeadLetter(event, {});
        else pending.set(key, event);
        return;
      }
      if (event.type === 'delivery-limit-exceeded') poison.set(event.messageId, { error: event.error, deliveries: event.deliveries });
      const line = formatWorkerEvent(event);
      if (!STDERR_EVENTS.has(event.type)) {
        writeLine(line);
        return;
      }
      writeError(line);
      if (event.type === 'delivery-failed' && event.counted && event.deliveries >= options.maxDeliveries) {
        writeError(
          `toolrun worker: message ${event.messageId} reached its delivery bound but could not be dead-lettered${lastError !== undefined ? ` (${lastError})` : ''}; kept in the queue and tried again`,
        );
      }
    },
    onResult(result) {
      const place = deadLetterOf(result);
      if (place === null) {
        if (result.status === 'completed') placements.completed += 1;
        else placements.other[result.status] = (placements.other[result.status] ?? 0) + 1;
      } else if (place.queue === 'message') placements.messageDlq += 1;
      else placements.toolDlq[place.kind as ToolDlqKind] += 1;
      if (options.json) {
        printJson({ type: 'result', status: result.status, runId: result.runId, messageId: result.messageId, deadLetter: place });
        return;
      }
      for (const key of [keyOf(result.messageId, undefined), keyOf(undefined, result.runId)]) {
        const event = key !== undefined ? pending.get(key) : undefined;
        if (event === undefined || key === undefined) continue;
        pending.delete(key);
        printDeadLetter(event, detailsOf(result));
        return;
      }
    },
    onError(error) {
      // every other error reaches the operator through an event line (delivery-failed, delivery-limit-exceeded)
      lastError = redact(errorText(error)).slice(0, 300);
      if (options.debug) {
        writeError(`toolrun worker: debug: ${lastError}`);
        if (error instanceof Error && error.stack) writeError(redact(error.stack));
      }
    },
    flush() {
      for (const event of pending.values()) {
        const seen = event.messageId !== undefined ? poison.get(event.messageId) : undefined;
        printDeadLetter(event, seen ? { error: redact(seen.error), deliveries: seen.deliveries } : {});
      }
      pending.clear();
    },
    summaryLines(handled, byStatus, failedDeliveries) {
      const toolTotal = placements.toolDlq.tool + placements.toolDlq.model + placements.toolDlq.run;
      const otherTotal = Object.values(placements.other).reduce((sum, count) => sum + count, 0);
      const lines = [`toolrun worker: handled ${plural(handled, 'message')} (${formatCounts(byStatus)})`];
      const where = [
        `${placements.completed} completed`,
        `${toolTotal} to the tool DLQ (tool ${placements.toolDlq.tool}, model ${placements.toolDlq.model}, run ${placements.toolDlq.run})`,
        `${placements.messageDlq} to the message DLQ`,
        ...(otherTotal > 0 ? [`${otherTotal} ended otherwise (${formatCounts(placements.other)})`] : []),
      ];
      lines.push(`toolrun worker: where they went: ${where.join('; ')}`);
      if (failedDeliveries > 0)
        lines.push(
          `toolrun worker: ${plural(failedDeliveries, 'delivery', 'deliveries')} failed and ${failedDeliveries === 1 ? 'was' : 'were'} given back to the queue (warnings on stderr)`,
        );
      if (toolTotal + placements.messageDlq > 0) {
        lines.push(
          'toolrun worker: dead letters are handled outcomes (exit code 0): inspect them with `toolrun dlq list`; resume tool-DLQ entries with `toolrun dlq replay ID` or `toolrun dlq drain` once the cause is fixed',
        );
      }
      return lines;
    },
  };
}

/**
 * Wraps the config's `onEvent` so that a throw in it never fails the handling of a message (the
 * worker would redeliver it, a replay would fail): the first throw is reported as one line on
 * stderr (`writeError`), later ones are counted silently. Returns a no-op without a handler.
 */
export function guardConfigOnEvent(
  onEvent: ((event: WorkerEvent) => void) | undefined,
  redactor: Redactor,
  writeError: (line: string) => void = (line) => void process.stderr.write(`${line}\n`),
): (event: WorkerEvent) => void {
  if (onEvent === undefined) return () => undefined;
  let failures = 0;
  return (event) => {
    try {
      onEvent(event);
    } catch (error) {
      failures += 1;
      if (failures === 1)
        writeError(
          `toolrun: the config's onEvent threw on a ${event.type} event (ignored; later ones not shown): ${redactor.text(errorText(error).slice(0, 4096)).slice(0, 300)}`,
        );
    }
  };
}
