import type { ToolContext } from './define-tool.ts';
import type { Clock } from './ports/clock.ts';

/** Outcome of one execution of a tool. */
export type AttemptOutcome =
  | { ok: true; value: unknown }
  | { ok: false; thrown: unknown; abortReason: 'timeout' | 'cancelled' | undefined };

/**
 * Executes a tool once, bounded by `timeoutMs` on the injected clock. On timeout or caller abort the
 * tool's `context.signal` is aborted (the work is cancelled, not just no longer awaited) and the
 * attempt settles at once; a late result or rejection of the tool is ignored.
 */
export function runAttempt(
  execute: (args: unknown, context: ToolContext) => unknown,
  args: unknown,
  context: Omit<ToolContext, 'signal'>,
  options: { timeoutMs: number; clock: Clock; callerSignal: AbortSignal | undefined },
): Promise<AttemptOutcome> {
  return new Promise<AttemptOutcome>((resolve) => {
    const controller = new AbortController();
    const timer = new AbortController();
    const { callerSignal } = options;
    let settled = false;
    let abortReason: 'timeout' | 'cancelled' | undefined;

    const onCallerAbort = () => {
      abortReason ??= 'cancelled';
      controller.abort(callerSignal?.reason);
      finish({ ok: false, thrown: callerSignal?.reason, abortReason: 'cancelled' });
    };
    function finish(outcome: AttemptOutcome): void {
      if (settled) return;
      settled = true;
      timer.abort();
      callerSignal?.removeEventListener('abort', onCallerAbort);
      resolve(outcome);
    }

    if (callerSignal?.aborted) {
      onCallerAbort();
      return;
    }
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    options.clock.sleep(options.timeoutMs, timer.signal).then(
      () => {
        if (settled) return;
        abortReason ??= 'timeout';
        const reason = new DOMException(`The tool did not answer within ${options.timeoutMs} ms`, 'TimeoutError');
        controller.abort(reason);
        finish({ ok: false, thrown: reason, abortReason: 'timeout' });
      },
      () => undefined,
    );

    let pending: Promise<unknown>;
    try {
      pending = Promise.resolve(execute(args, { ...context, signal: controller.signal }));
    } catch (thrown) {
      pending = Promise.reject(thrown);
    }
    pending.then(
      (value) => finish({ ok: true, value }),
      (thrown: unknown) => finish({ ok: false, thrown, abortReason }),
    );
  });
}
