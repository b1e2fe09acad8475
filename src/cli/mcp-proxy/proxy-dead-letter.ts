import { randomUUID } from 'node:crypto';
import { MCP_PROXY_HOST, type McpProxiedCall } from '../../adapters/mcp/mcp-proxy-continuation.ts';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import type { ToolCallRecord } from '../../core/tool-call-record.ts';
import type { ToolFailureEntry } from '../../ground/dead-letter-entries.ts';
import type { Stores } from '../../ground/ports/stores.ts';
import type { JsonValue } from '../../ground/ports/run-journal.ts';
import { createHostRunDeadLetter } from '../../worker/host-run-dead-letter.ts';

/** Where `toolrun mcp-proxy` dead-letters the calls that exhaust their retries. */
export interface ProxyDeadLetterOptions {
  /** The proxy's stores: the entry goes to `toolDlq`, the call (unredacted, with its origin) to the conversation of its `journal`. */
  stores: Pick<Stores, 'toolDlq' | 'journal'>;
  /** Called with each entry written (for the log, the metrics and the alert line). */
  onDeadLettered?: (entry: ToolFailureEntry) => void;
}

/** One guarded call as the proxy settles it. */
export interface SettledProxyCall {
  record: ToolCallRecord;
  runtime: ToolRuntime;
  callId: string;
  /** The tool's retries allowed (its attempts minus one): 0 for a tool that is neither idempotent nor read-only. */
  retryBudget: number;
  arguments: unknown;
  origin: McpProxiedCall['origin'];
}

/** Keeps the characters of a run id readable in `dlq list` (`[A-Za-z0-9_-]`), at most 48 of them. */
function idPart(value: string): string {
  return value.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 48);
}

/**
 * The run id of a dead-lettered proxied call (each call is a run of its own: an MCP client's loop
 * is not the proxy's): its session (or connection) and request id, then a nonce, since request ids
 * repeat across sessions and restarts. The exact origin is in the stored call.
 */
export function proxiedRunId(origin: McpProxiedCall['origin']): string {
  return `${idPart(origin.sessionId ?? origin.connection)}_req-${idPart(String(origin.requestId))}_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
}

/**
 * Dead-letters one guarded call of the proxy with toolrun's host core (the `mcp` host), when its
 * failure is exhausted: an environment failure once the tool's attempts are spent (every attempt,
 * or the one attempt of a tool that is not idempotent), a misconfiguration (fed to the shared
 * breaker) or an open breaker. Invalid arguments and the upstream's own refusals are the client's
 * to fix: not dead-lettered. The entry's `toolArgs` are redacted by the proxy's redactor; the call
 * as sent (and its origin) is stored in the conversation store. Returns the entry, when one was written.
 *
 * @throws what the stores throw.
 */
export async function deadLetterProxiedCall(call: SettledProxyCall, options: ProxyDeadLetterOptions): Promise<ToolFailureEntry | undefined> {
  if (call.record.result.status !== 'failed') return undefined;
  let written: ToolFailureEntry | undefined;
  const { toolDlq, journal } = options.stores;
  const deadLetter = createHostRunDeadLetter({
    host: MCP_PROXY_HOST,
    runId: proxiedRunId(call.origin),
    runtime: call.runtime,
    toolRetryBudget: Math.max(0, Math.min(100, call.retryBudget)),
    stores: {
      journal,
      toolDlq: {
        remove: (id) => toolDlq.remove(id),
        pushOnce: async (key, entry) => {
          const pushed = await toolDlq.pushOnce(key, entry);
          if (pushed.added) written = entry as ToolFailureEntry;
          return pushed;
        },
      },
    },
  });
  const stored: McpProxiedCall = {
    type: 'mcp_tools_call',
    callId: call.callId,
    name: call.record.toolName,
    arguments: (call.arguments ?? {}) as JsonValue,
    origin: { ...call.origin, upstream: call.runtime.redactor.text(call.origin.upstream) },
  };
  await deadLetter.settle({
    record: call.record,
    toolCallId: call.callId,
    args: call.arguments ?? {},
    stepIndex: 0,
    conversation: () => ({ messages: [stored] }),
  });
  if (written !== undefined) options.onDeadLettered?.(written);
  return written;
}
