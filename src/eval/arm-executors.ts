/**
 * The eval's arms: what turns a tool call into the tool message the model reads. The tool side
 * (`TaskTools`) is the same in every arm; only the text the model reads, and in the third arm
 * toolrun's retries and breaker, differ.
 */
import { createToolRuntime } from '../core/create-tool-runtime.ts';
import { defineTool } from '../core/define-tool.ts';
import { formatToolResult } from '../core/format-tool-result.ts';
import { sdkDefaultErrorText, sdkUnknownToolText, type HostSdk } from './sdk-error-text.ts';
import type { TaskTools } from './task-tools.ts';

/**
 * The arms, same tasks, faults and seed:
 * - `sdk-default`: the host SDK's default error text (`--sdk`), no schema check, no retries;
 * - `toolrun`: toolrun's envelope (runtime with one attempt per call and no session breaker);
 * - `toolrun-policies`: toolrun's envelope with its default retries (3 attempts, `Retry-After`
 *   honoured) and its per-session breaker (3 consecutive failures).
 */
export type EvalArm = 'sdk-default' | 'toolrun' | 'toolrun-policies';

/** Every {@link EvalArm}, in report order. */
export const EVAL_ARMS: readonly EvalArm[] = ['sdk-default', 'toolrun', 'toolrun-policies'];

/** What one tool call gave the model. */
export interface CallOutcome {
  /** The tool message's content. */
  text: string;
  /** Whether the call succeeded. */
  ok: boolean;
  /** The host ended the run instead of answering (OpenAI Agents on an unknown tool). */
  endsRun?: boolean;
}

/** Runs one tool call of a task in an arm. */
export type ArmExecutor = (call: { id: string; name: string; args: unknown }, runKey: string) => Promise<CallOutcome>;

function argsObject(args: unknown): Record<string, unknown> | Error {
  let value = args;
  if (typeof args === 'string') {
    try {
      value = args.trim() === '' ? {} : JSON.parse(args);
    } catch (error) {
      return error as Error;
    }
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : new Error('arguments must be a JSON object');
}

/**
 * The executor of an arm for one task's tools.
 *
 * `sdk-default` calls the tool with the arguments as sent (an SDK with a JSON Schema tool and no
 * validate function checks nothing) under a `toolTimeoutMs` abort; a thrown error becomes
 * `sdkDefaultErrorText(sdk, error)`, an unknown name `sdkUnknownToolText`, a success the result
 * (a string as is, else its JSON). The toolrun arms run the call through a runtime over the same
 * tools and give the model `formatToolResult(envelope)`.
 */
export function createArmExecutor(arm: EvalArm, tools: TaskTools, sdk: HostSdk): ArmExecutor {
  if (arm === 'sdk-default') {
    return async (call) => {
      if (tools.originalName(call.name) === undefined) {
        const text = sdkUnknownToolText(sdk, call.name, tools.offeredNames);
        return text === undefined ? { text: '', ok: false, endsRun: true } : { text, ok: false };
      }
      const args = argsObject(call.args);
      if (args instanceof Error) return { text: sdkDefaultErrorText(sdk, args), ok: false };
      try {
        const result = await tools.invoke(call.name, args, AbortSignal.timeout(tools.toolTimeoutMs));
        return { text: typeof result === 'string' ? result : (JSON.stringify(result) ?? ''), ok: true };
      } catch (error) {
        return { text: sdkDefaultErrorText(sdk, error), ok: false };
      }
    };
  }
  const definitions = tools.specs.map((spec) =>
    defineTool({
      name: spec.name,
      description: spec.description,
      inputSchema: spec.inputSchema,
      idempotent: true,
      timeoutMs: tools.toolTimeoutMs,
      execute: (args: Record<string, unknown>, context) => tools.invoke(spec.name, args, context.signal),
    }),
  );
  const runtime =
    arm === 'toolrun' ? createToolRuntime({ tools: definitions, retry: { maxAttempts: 1 }, sessionBreaker: false }) : createToolRuntime({ tools: definitions });
  return async (call, runKey) => {
    const result = await runtime.run({ name: call.name, args: call.args, callId: call.id, sessionId: runKey, runId: runKey });
    return { text: formatToolResult(result), ok: result.status === 'success' };
  };
}
