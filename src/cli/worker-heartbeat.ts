import type { QueueDelivery, RunQueue, Stores } from '../index.ts';

/** The default interval of the worker's heartbeat on a terminal, in ms. */
export const DEFAULT_HEARTBEAT_MS = 10_000;

/** A run queue that counts the messages this process holds: reserved and not yet acked or released. */
export interface InFlightQueue {
  queue: RunQueue;
  /** Messages reserved by this process and not acked or released since. */
  inFlight(): number;
}

/** Wraps `queue` so that {@link InFlightQueue.inFlight} counts this process's leased messages. */
export function countInFlight(queue: RunQueue): InFlightQueue {
  const held = new Set<string>();
  const wrapped: RunQueue = {
    enqueue: (message) => queue.enqueue(message),
    reserve: async (leaseMs) => {
      const delivery: QueueDelivery | undefined = await queue.reserve(leaseMs);
      if (delivery) held.add(delivery.id);
      return delivery;
    },
    ack: async (id) => {
      await queue.ack(id);
      held.delete(id);
    },
    release: async (id, options) => {
      await queue.release(id, options);
      held.delete(id);
    },
    extendLease: (id, deliveries, leaseMs) => queue.extendLease(id, deliveries, leaseMs),
    size: () => queue.size(),
  };
  return { queue: wrapped, inFlight: () => held.size };
}

/** What one heartbeat line says. */
export interface HeartbeatSnapshot {
  /** Since the worker started, ms. */
  elapsedMs: number;
  /** Messages handled since the start. */
  handled: number;
  /** Messages handled since the previous beat. */
  handledSinceLastBeat: number;
  /** Time since the previous beat, ms. */
  intervalMs: number;
  inFlight: number;
  /** Messages waiting or leased in the queue (`null`: the store did not answer). */
  queueSize: number | null;
  messageDlqDepth: number | null;
  toolDlqDepth: number | null;
}

function seconds(ms: number): string {
  const total = Math.round(ms / 1000);
  if (total < 60) return `${total}s`;
  const minutes = Math.floor(total / 60);
  return minutes < 60 ? `${minutes}m ${total % 60}s` : `${Math.floor(minutes / 60)}h ${minutes % 60}m`;
}

/**
 * One heartbeat line:
 * `toolrun worker: up 20s · handled 40 (+12, 1.2/s) · in flight 2 · queue 118 · DLQ: message 1, tool 3`.
 */
export function formatHeartbeat(snapshot: HeartbeatSnapshot): string {
  const rate = snapshot.intervalMs > 0 ? (snapshot.handledSinceLastBeat * 1000) / snapshot.intervalMs : 0;
  const value = (count: number | null) => (count === null ? '?' : String(count));
  return (
    `toolrun worker: up ${seconds(snapshot.elapsedMs)} · handled ${snapshot.handled} (+${snapshot.handledSinceLastBeat}, ${rate.toFixed(1)}/s)` +
    ` · in flight ${snapshot.inFlight} · queue ${value(snapshot.queueSize)} · DLQ: message ${value(snapshot.messageDlqDepth)}, tool ${value(snapshot.toolDlqDepth)}`
  );
}

/** Options of {@link startHeartbeat}. */
export interface HeartbeatOptions {
  intervalMs: number;
  stores: Pick<Stores, 'queue' | 'messageDlq' | 'toolDlq'>;
  /** Messages handled so far. */
  handled: () => number;
  inFlight: () => number;
  writeLine: (line: string) => void;
  /** @defaultValue `Date.now` */
  now?: () => number;
}

/**
 * Prints a heartbeat line every `intervalMs` (the timer does not keep the process alive; a beat
 * whose store reads are still running skips the next one). Store errors show as `?`, never throw.
 * Returns `stop()`.
 */
export function startHeartbeat(options: HeartbeatOptions): { stop(): void } {
  const now = options.now ?? Date.now;
  const startedAt = now();
  let lastAt = startedAt;
  let lastHandled = 0;
  let busy = false;
  let stopped = false;
  const count = (read: () => Promise<number>) => read().catch(() => null);
  const beat = async () => {
    if (busy || stopped) return;
    busy = true;
    try {
      const [queueSize, messageDlqDepth, toolDlqDepth] = await Promise.all([
        count(() => options.stores.queue.size()),
        count(() => options.stores.messageDlq.size()),
        count(() => options.stores.toolDlq.size()),
      ]);
      if (stopped) return;
      const at = now();
      const handled = options.handled();
      options.writeLine(
        formatHeartbeat({
          elapsedMs: at - startedAt,
          handled,
          handledSinceLastBeat: handled - lastHandled,
          intervalMs: at - lastAt,
          inFlight: options.inFlight(),
          queueSize,
          messageDlqDepth,
          toolDlqDepth,
        }),
      );
      lastAt = at;
      lastHandled = handled;
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void beat(), options.intervalMs);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
