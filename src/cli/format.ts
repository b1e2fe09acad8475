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

/** Pads columns so that a small table lines up. */
export function formatTable(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, index) => (widths[index] = Math.max(widths[index] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] ?? 0))).join('  ').trimEnd());
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
      return `${at} ${level} dead-letter-add queue=${event.queue} reason=${event.reason}${event.toolName !== undefined ? ` tool=${event.toolName}` : ''}${event.modelName !== undefined ? ` model=${event.modelName}` : ''}${event.runId !== undefined ? ` run=${event.runId}` : ''}`;
  }
}
