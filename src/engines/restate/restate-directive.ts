import type { HandleMessageResult } from '../../worker/handle-message-options.ts';

/**
 * How a Restate invocation ends for a run's outcome:
 * - `return`: the run ended in-band (completed, `max_steps`, cancelled): the handler's result;
 * - `terminal`: the run is in one of toolrun's DLQs (or was refused): a `TerminalError`, so Restate
 *   does not retry it, whose `metadata` names the DLQ and the run (`errorCode` 400 for a message
 *   that cannot start a run, 409 for a run dead-lettered in the tool DLQ, 500 for a poison run).
 */
export type RestateEnding = { kind: 'return' } | { kind: 'terminal'; errorCode: number; message: string; metadata: Record<string, string> };

/** The ending of a Restate invocation for a run's outcome (see {@link RestateEnding}). */
export function restateDirectiveOf(result: HandleMessageResult): RestateEnding {
  switch (result.status) {
    case 'rejected':
      return {
        kind: 'terminal',
        errorCode: 400,
        message: `toolrun: the message cannot start a run (${result.reason.code}); it is in the message DLQ`,
        metadata: { toolrunStatus: result.status, dlq: 'message', reason: result.reason.code },
      };
    case 'delivery_limit_exceeded':
      return {
        kind: 'terminal',
        errorCode: 500,
        message: `toolrun: a step of the run failed past its retries; the run is in the ${result.queue} DLQ`,
        metadata: { toolrunStatus: result.status, dlq: result.queue, runId: result.runId ?? '' },
      };
    case 'tool_failed':
    case 'model_failed': {
      const entry = result.toolFailure ?? result.modelFailure;
      return {
        kind: 'terminal',
        errorCode: 409,
        message: `toolrun: run ${result.runId} ${result.status === 'tool_failed' ? 'exhausted in-band recovery of a tool' : 'failed at the model'}; it is in the tool DLQ, resumable`,
        metadata: {
          toolrunStatus: result.status,
          dlq: 'tool',
          runId: result.runId,
          ...(entry ? { stepIndex: String(entry.stepIndex), conversationRef: entry.conversationRef } : {}),
        },
      };
    }
    case 'busy':
      // not reached: the run's claim is waited for inside the journal's `open` step
      return {
        kind: 'terminal',
        errorCode: 503,
        message: `toolrun: run ${result.runId} is claimed by ${result.holder ?? 'another holder'}`,
        metadata: { toolrunStatus: 'busy' },
      };
    default:
      return { kind: 'return' };
  }
}
