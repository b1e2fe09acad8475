/**
 * The tool side of one task in one arm, the same in every arm: the tools offered (renamed and gone
 * tools applied), and the call to the service with the plan's transient faults injected.
 */
import type { ToolSpec } from '../core/tool-registry.ts';
import type { EvalService, EvalWorkload, ServiceFault } from './eval-task.ts';
import { callKey, type TaskFaultPlan } from './fault-plan.ts';
import type { EvalTask } from './eval-task.ts';

/** The tools of one task run. */
export interface TaskTools {
  /** The tools offered to the model (after renames and removals), in the workload's order. */
  specs: ToolSpec[];
  offeredNames: string[];
  /** Per-attempt timeout of every tool call, in milliseconds. */
  toolTimeoutMs: number;
  /** The original tool of an offered name, or `undefined` when the name is not offered. */
  originalName(offeredName: string): string | undefined;
  /** Calls an offered tool on the task's database (rejects like {@link EvalService.call}). */
  invoke(offeredName: string, args: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
  /** Keys ({@link callKey}, original names) of calls that succeeded. */
  readonly succeededKeys: ReadonlySet<string>;
  /** Indexes (into the plan's faults) of the transient faults that were injected. */
  readonly firedTransients: ReadonlySet<number>;
  /** Requests sent to the service. */
  readonly serviceRequests: () => number;
}

const TRANSIENT: Record<string, ServiceFault> = { unavailable: 'unavailable', rate_limit: 'rate_limit', timeout: 'hang' };

/** FNV-1a, hex: a short stable digest for idempotency keys. */
function digest(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}

/**
 * Builds the tools of one task run on `databaseKey`.
 *
 * Each request carries an idempotency key derived from the database, the tool and the canonical
 * arguments (the same write sent twice is applied once, in every arm). The first request of an
 * intended call that the plan gives a transient fault (`unavailable`, `rate_limit`, `timeout`) is
 * sent with that fault.
 */
export function createTaskTools(options: {
  task: EvalTask;
  plan: TaskFaultPlan;
  workload: EvalWorkload;
  service: EvalService;
  databaseKey: string;
  toolTimeoutMs: number;
}): TaskTools {
  const { plan, workload, service, databaseKey } = options;
  const offeredToOriginal = new Map<string, string>();
  const specs: ToolSpec[] = [];
  for (const tool of workload.tools) {
    if (plan.goneTools.has(tool.name)) continue;
    const offered = plan.renamedTools.get(tool.name) ?? tool.name;
    offeredToOriginal.set(offered, tool.name);
    specs.push({ name: offered, description: tool.description, inputSchema: tool.parameters });
  }
  const pending = new Map<string, number[]>();
  plan.faults.forEach((fault, index) => {
    if (TRANSIENT[fault.kind] === undefined) return;
    const intended = options.task.turns[fault.turn]?.calls[fault.call];
    if (intended === undefined) return;
    const key = callKey(intended.name, intended.args);
    pending.set(key, [...(pending.get(key) ?? []), index]);
  });
  const succeededKeys = new Set<string>();
  const firedTransients = new Set<number>();
  let requests = 0;
  return {
    specs,
    offeredNames: specs.map((spec) => spec.name),
    toolTimeoutMs: options.toolTimeoutMs,
    originalName: (offeredName) => offeredToOriginal.get(offeredName),
    invoke: async (offeredName, args, signal) => {
      const toolName = offeredToOriginal.get(offeredName);
      if (toolName === undefined) throw new Error(`no tool named ${offeredName}`);
      const key = callKey(toolName, args);
      const waiting = pending.get(key);
      const faultIndex = waiting?.shift();
      const fault = faultIndex === undefined ? undefined : TRANSIENT[plan.faults[faultIndex]!.kind];
      if (faultIndex !== undefined) firedTransients.add(faultIndex);
      requests += 1;
      const result = await service.call({
        databaseKey,
        toolName,
        args,
        idempotencyKey: `${databaseKey}:${toolName}:${digest(key)}`,
        ...(fault === undefined ? {} : { fault }),
        signal,
      });
      succeededKeys.add(key);
      return result;
    },
    succeededKeys,
    firedTransients,
    serviceRequests: () => requests,
  };
}
