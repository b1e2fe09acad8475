import { createHash, randomUUID } from 'node:crypto';
import { ErrorCode, McpError, type Result } from '@modelcontextprotocol/sdk/types.js';
import type { IdempotencyLedger } from '../../ground/ports/stores.ts';
import type { JsonValue } from '../../ground/ports/run-journal.ts';
import type { ToolFailure } from '../../ground/tool-result.ts';

/**
 * The `_meta` key of a `tools/call`'s idempotency key: a client that re-sends a call (the stateless
 * protocol re-sends a request whose response stream broke, with a new request id) sends the same
 * key, and a tool that is not idempotent runs once.
 */
export const IDEMPOTENCY_KEY_META_KEY = 'dev.toolrun/idempotencyKey';

/** The longest idempotency key taken (a longer one is refused). */
const MAX_KEY_LENGTH = 256;

/** An idempotency key of a request's `_meta`; `undefined` when it has none. @throws McpError `InvalidParams` for a key that is not a short non-empty string. */
export function idempotencyKeyOf(meta: Record<string, unknown> | undefined): string | undefined {
  const key = meta?.[IDEMPOTENCY_KEY_META_KEY];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw new McpError(ErrorCode.InvalidParams, `_meta["${IDEMPOTENCY_KEY_META_KEY}"] must be a string of 1 to ${MAX_KEY_LENGTH} characters`);
  }
  return key;
}

/** The failure of a call whose idempotency key is claimed and not answered: it is not run again. */
export function inFlightFailure(toolName: string, callId: string): ToolFailure {
  return {
    status: 'failed',
    tool_name: toolName,
    call_id: callId,
    duration_ms: 0,
    attempts: 0,
    trace_id: randomUUID().replaceAll('-', ''),
    error: {
      type: 'logic',
      code: 'PRECONDITION_FAILED',
      message: `this call of ${toolName} (the same idempotency key) is still running, or stopped with its outcome unknown: it was not run again`,
      detail: '',
      retryable: true,
      suggestion: `Send it again later with the same idempotency key to get its answer; if none comes, check whether it took effect before calling ${toolName} with a new key.`,
    },
  };
}

/** What the ledger keeps of a call that ran: its arguments' fingerprint and the answer the client got. */
interface RecordedCall {
  arguments: string;
  result: JsonValue;
}

/** Options of {@link createIdempotentCalls}. */
export interface IdempotentCallsOptions {
  /** Where the answers of calls with a key are recorded (shared by the proxy's replicas through the store). */
  ledger: IdempotencyLedger;
  /** Prepended to every ledger key: the upstream's identity (the shared breaker keys' prefix). */
  keyPrefix: string;
}

/** Runs a call with an idempotency key at most once; see {@link createIdempotentCalls}. */
export interface IdempotentCalls {
  /**
   * `execute`'s answer, or the answer recorded for `key` when the call already ran. A call still
   * running in this proxy is joined; one claimed and not finished elsewhere (another replica, or a
   * proxy that stopped mid-call) is not run again: it gets `inFlight`'s answer.
   * @throws McpError `InvalidParams` when the key was used with other arguments.
   */
  run(
    call: { tool: string; key: string; arguments: unknown },
    execute: () => Promise<{ result: Result; ran: boolean }>,
    inFlight: () => Result,
  ): Promise<Result>;
}

/**
 * At-most-once `tools/call` by idempotency key, for the tools that are not idempotent. Two ledger
 * entries per key: `…:claim` (taken before the call runs, `putIfAbsent`: of two replicas one wins)
 * and `…:answer` (the answer, once it is known). An answer of a call the upstream never saw
 * (`ran: false`: refused by validation or a breaker) is not recorded and the claim is released, so
 * sending it again runs it.
 */
export function createIdempotentCalls(options: IdempotentCallsOptions): IdempotentCalls {
  const running = new Map<string, { fingerprint: string; answer: Promise<Result> }>();

  async function runOnce(
    ledgerKey: string,
    fingerprint: string,
    execute: () => Promise<{ result: Result; ran: boolean }>,
    inFlight: () => Result,
  ): Promise<Result> {
    const recorded = (await options.ledger.get(`${ledgerKey}:answer`)) as RecordedCall | undefined;
    if (recorded) return answerOf(recorded, fingerprint);
    const claim = await options.ledger.putIfAbsent(`${ledgerKey}:claim`, fingerprint);
    if (!claim.stored) {
      const late = (await options.ledger.get(`${ledgerKey}:answer`)) as RecordedCall | undefined;
      if (late) return answerOf(late, fingerprint);
      if (claim.value !== fingerprint) throw reused();
      return inFlight();
    }
    const { result, ran } = await execute();
    if (!ran) {
      await options.ledger.delete(`${ledgerKey}:claim`);
      return result;
    }
    await options.ledger.putIfAbsent(`${ledgerKey}:answer`, { arguments: fingerprint, result: result as unknown as JsonValue });
    return result;
  }

  return {
    async run(call, execute, inFlight) {
      const ledgerKey = `mcp-call:${options.keyPrefix}${call.tool}:${call.key}`;
      const fingerprint = createHash('sha256')
        .update(JSON.stringify(call.arguments ?? {}))
        .digest('hex');
      const joined = running.get(ledgerKey);
      if (joined) {
        if (joined.fingerprint !== fingerprint) throw reused();
        return joined.answer;
      }
      const answer = runOnce(ledgerKey, fingerprint, execute, inFlight).finally(() => running.delete(ledgerKey));
      running.set(ledgerKey, { fingerprint, answer });
      return answer;
    },
  };
}

function answerOf(recorded: RecordedCall, fingerprint: string): Result {
  if (recorded.arguments !== fingerprint) throw reused();
  return recorded.result as unknown as Result;
}

function reused(): McpError {
  return new McpError(ErrorCode.InvalidParams, 'this idempotency key was used for a call with other arguments: send a new key for a new call');
}
