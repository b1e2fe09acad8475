import type { WorkerEvent } from '../index.ts';

/** Writes one line to stdout. */
export function printLine(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** Writes one compact JSON value as a line to stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** A duration for people: `850ms`, `12s`, `3m 12s`, `2h 5m`, `3d 4h`. */
export function formatDurationMs(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${seconds % 60}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h ${minutes % 60}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

/** `a 3, b 1` from a record of counts (sorted by key); `none` when empty. */
export function formatCounts(counts: Readonly<Record<string, number | undefined>>): string {
  const parts = Object.entries(counts)
    .filter((entry): entry is [string, number] => entry[1] !== undefined && entry[1] > 0)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, count]) => `${key} ${count}`);
  return parts.length > 0 ? parts.join(', ') : 'none';
}

/** A size in bytes for people: `812 B`, `1.2 KiB`, `3.4 MiB`, `1.0 GiB`. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1024) return `${Math.max(0, Math.round(bytes))} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** Pads columns so that a small table lines up. */
export function formatTable(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, index) => (widths[index] = Math.max(widths[index] ?? 0, cell.length)));
  return rows.map((row) =>
    row
      .map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** Cuts a text to `maxLength` characters on one line. */
export function preview(text: string, maxLength = 60): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > maxLength ? `${flat.slice(0, maxLength - 1)}…` : flat;
}

/** Worker events that are alerts (an operator should act). */
export const ALERT_EVENTS: ReadonlySet<WorkerEvent['type']> = new Set(['breaker-open', 'breaker-reopen', 'dead-letter-full', 'delivery-limit-exceeded']);

/** Worker events that are warnings (something failed and was handled). */
const WARNING_EVENTS: ReadonlySet<WorkerEvent['type']> = new Set(['delivery-failed', 'lease-lost', 'dead-letter-add']);

/** The kind of a `dead-letter-add` event's entry: `message`, or in the tool DLQ `tool`, `model` or `run`. */
type DeadLetterAddKind = NonNullable<Extract<WorkerEvent, { type: 'dead-letter-add' }>['kind']>;

/** What the worker knows about a dead letter besides its `dead-letter-add` event (from the handled message's result). */
export interface DeadLetterDetails {
  /** `message`, or the tool-DLQ entry's kind: `tool`, `model`, `run`. @defaultValue inferred from the event */
  kind?: DeadLetterAddKind;
  /** The last error, ALREADY REDACTED (it is printed as given, cut to one line of 160 characters). */
  error?: string;
  /** For a poison message: the deliveries that failed. */
  deliveries?: number;
}

/** The kind of the entry of a `dead-letter-add` event, as far as the event tells: `message`, `tool`, `model` or `run`. */
export function deadLetterKindOf(event: Extract<WorkerEvent, { type: 'dead-letter-add' }>): DeadLetterAddKind {
  if (event.queue === 'message') return 'message';
  if (event.modelName !== undefined) return 'model';
  if (event.toolName !== undefined) return 'tool';
  return event.reason === 'delivery-limit-exceeded' ? 'run' : 'tool';
}

/**
 * One line for a dead letter: `… warn dead-letter-add queue=tool kind=model reason=model-not-retryable
 * run=run_m-1 model=gpt-4o message=m-1: auth 401: Incorrect API key provided: [REDACTED]`.
 */
export function formatDeadLetterAdd(event: Extract<WorkerEvent, { type: 'dead-letter-add' }>, details: DeadLetterDetails = {}): string {
  const at = new Date(event.at).toISOString();
  const parts = [
    `${at} warn dead-letter-add queue=${event.queue} kind=${details.kind ?? deadLetterKindOf(event)} reason=${event.reason}`,
    ...(event.runId !== undefined ? [`run=${event.runId}`] : []),
    ...(event.toolName !== undefined ? [`tool=${event.toolName}`] : []),
    ...(event.modelName !== undefined ? [`model=${event.modelName}`] : []),
    ...(details.deliveries !== undefined ? [`deliveries=${details.deliveries}`] : []),
    ...(event.messageId !== undefined ? [`message=${event.messageId}`] : []),
  ];
  return `${parts.join(' ')}${details.error !== undefined && details.error !== '' ? `: ${preview(details.error, 160)}` : ''}`;
}

/** One line for a worker event: `2026-01-01T00:00:00.000Z ALERT breaker-open tool=book_flight …`. */
export function formatWorkerEvent(event: WorkerEvent): string {
  const level = ALERT_EVENTS.has(event.type) ? 'ALERT' : WARNING_EVENTS.has(event.type) ? 'warn' : 'info';
  const target = (name: string, kind: 'tool' | 'model' | undefined) => (kind === 'model' ? `model=${name.replace(/^model:/, '')}` : `tool=${name}`);
  const at = new Date(event.at).toISOString();
  switch (event.type) {
    case 'breaker-open':
      return `${at} ${level} breaker-open ${target(event.toolName, event.target)} openings=${event.openings}: ${preview(event.lastError, 120)} (${event.target === 'model' ? 'later runs are dead-lettered without calling the model' : 'later runs get CIRCUIT_OPEN at once'})`;
    case 'breaker-reopen':
    case 'breaker-half-open':
    case 'breaker-close':
      return `${at} ${level} ${event.type} ${target(event.toolName, event.target)}`;
    case 'dead-letter-full':
      return `${at} ${level} dead-letter-full queue=${event.queue} size=${event.size} maxEntries=${event.maxEntries}${event.bytes !== undefined ? ` bytes=${event.bytes} maxBytes=${event.maxBytes}` : ''}: the worker takes no new message until it is drained or purged`;
    case 'message-duplicate':
      return `${at} ${level} message-duplicate message=${event.messageId ?? '-'} run=${event.runId}: its run had already ended ${event.runStatus}; acknowledged, nothing run again`;
    case 'delivery-failed':
      return `${at} ${level} delivery-failed message=${event.messageId} delivery=${event.deliveries}/${event.maxDeliveries}${event.counted ? '' : ' (store outage, not counted)'}: ${preview(event.error, 160)}; redelivered in ${formatDurationMs(event.retryInMs)}`;
    case 'delivery-limit-exceeded':
      return `${at} ${level} delivery-limit-exceeded message=${event.messageId}${event.runId !== null ? ` run=${event.runId}` : ''} deliveries=${event.deliveries} queue=${event.queue}: ${preview(event.error, 160)}`;
    case 'run-busy':
      return `${at} ${level} run-busy run=${event.runId} message=${event.messageId ?? '-'}: claimed by ${event.holder ?? 'another consumer'}; delivered again later`;
    case 'lease-lost':
      return `${at} ${level} lease-lost message=${event.messageId} delivery=${event.deliveries}: another worker may take it; its run stays claimed by this one`;
    case 'dead-letter-below-bound':
      return `${at} ${level} dead-letter-below-bound queue=${event.queue} size=${event.size}: taking messages again`;
    case 'dead-letter-add':
      return formatDeadLetterAdd(event);
  }
}
