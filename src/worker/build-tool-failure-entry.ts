import type { AgentRunResult } from '../agent/run-agent.ts';
import type { ToolFailureInfo } from '../agent/run-state.ts';
import { truncateText } from '../core/build-failure.ts';
import type { Redactor } from '../core/redact.ts';
import type { ToolFailureEntry } from './dead-letter-entries.ts';

function redactArguments(args: unknown, redactor: Redactor, sensitiveKeys: readonly string[]): unknown {
  if (typeof args === 'string') {
    try {
      return redactor.value(JSON.parse(args), sensitiveKeys);
    } catch {
      return truncateText(redactor.text(args), 2048);
    }
  }
  return redactor.value(args, sensitiveKeys);
}

/**
 * Builds the tool-DLQ entry of a run that ended `tool_failed`: arguments and error text redacted
 * with the runtime's redactor (plus the tool's sensitive keys), the conversation by reference only.
 */
export function buildToolFailureEntry(
  run: AgentRunResult,
  failure: ToolFailureInfo,
  context: { messageId: string; redactor: Redactor; sensitiveKeys: readonly string[]; firstSeenAt: string },
): ToolFailureEntry {
  return {
    kind: 'tool',
    runId: run.runId,
    stepIndex: failure.stepIndex,
    toolName: failure.toolName,
    toolArgs: redactArguments(failure.toolArgs, context.redactor, context.sensitiveKeys),
    attempts: failure.attempts,
    lastError: { kind: failure.lastError.kind, status: failure.lastError.status, message: truncateText(context.redactor.text(failure.lastError.message), 1024) },
    conversationRef: run.conversationRef,
    tokensSpent: { ...run.tokensSpent },
    firstSeenAt: context.firstSeenAt,
    originalMessageId: context.messageId,
    reason: failure.reason,
  };
}
