/**
 * The eval's seeded fault plan: which intended calls of a task meet which fault. The same seed and
 * task always give the same plan, and every arm runs the same plan.
 */
import { createSeededRandom } from '../testing/seeded-random.ts';
import { canonicalJson, type EvalTask, type IntendedCall } from './eval-task.ts';

/**
 * The faults a plan injects:
 * - `bad_argument`: the model's first call of the intended call sends one argument under a wrong
 *   key (`reservation_id` as `reservationId`), which the service rejects;
 * - `unavailable` / `rate_limit` / `timeout`: the first request of the call is answered 503, 429
 *   with `Retry-After`, or never (the service applies a write, then stays silent);
 * - `tool_gone`: the call's tool is not offered in this task (only read tools are removed);
 * - `renamed_tool`: the call's tool is offered as `<name>_v2` in this task.
 */
export type FaultKind = 'bad_argument' | 'unavailable' | 'rate_limit' | 'timeout' | 'tool_gone' | 'renamed_tool';

/** Every {@link FaultKind}, in the order the plan draws from. */
export const FAULT_KINDS: readonly FaultKind[] = ['bad_argument', 'unavailable', 'rate_limit', 'timeout', 'tool_gone', 'renamed_tool'];

/** One planned fault: the kind, and the intended call it hits (turn index, call index in the turn). */
export interface PlannedFault {
  kind: FaultKind;
  turn: number;
  call: number;
  /** The intended call's tool (its original name). */
  toolName: string;
  /** `bad_argument`: the key sent wrong, and the key it is sent under. */
  badKey?: { key: string; sentAs: string };
}

/** A task's faults. */
export interface TaskFaultPlan {
  taskId: string;
  faults: PlannedFault[];
  /** Tools not offered in this task. */
  goneTools: ReadonlySet<string>;
  /** Offered name of each renamed tool (original → offered). */
  renamedTools: ReadonlyMap<string, string>;
}

/** FNV-1a of a string, to mix a task id into the seed. */
function hash32(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** The wrong key a model sends for `key`: camelCase for snake_case, else `<key>_value`. */
export function misspelledKey(key: string): string {
  const camel = key.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
  return camel === key ? `${key}_value` : camel;
}

/** The key of a call for matching: its original tool name and canonical arguments. */
export function callKey(toolName: string, args: unknown): string {
  return `${toolName} ${canonicalJson(args)}`;
}

/**
 * Draws a task's faults: `faultsPerTask` distinct intended calls, each with a kind drawn uniformly
 * from {@link FAULT_KINDS}; a kind that does not fit the call (`bad_argument` on a call without
 * arguments, `tool_gone` on a write or on a tool already gone or renamed) is drawn again, up to 8
 * times, then the call gets `unavailable`. Tasks with fewer calls get fewer faults.
 *
 * @param writeTools - tools that change data (never removed).
 */
export function planTaskFaults(task: EvalTask, options: { seed: number; faultsPerTask: number; writeTools: ReadonlySet<string> }): TaskFaultPlan {
  const random = createSeededRandom((options.seed >>> 0) ^ hash32(task.id));
  const positions: Array<{ turn: number; call: number; intended: IntendedCall }> = [];
  task.turns.forEach((turn, turnIndex) => turn.calls.forEach((intended, callIndex) => positions.push({ turn: turnIndex, call: callIndex, intended })));
  const faults: PlannedFault[] = [];
  const goneTools = new Set<string>();
  const renamedTools = new Map<string, string>();
  const count = Math.min(options.faultsPerTask, positions.length);
  for (let drawn = 0; drawn < count; drawn += 1) {
    const at = Math.floor(random() * positions.length);
    const [position] = positions.splice(at, 1);
    if (position === undefined) break;
    const { intended } = position;
    const toolTaken = goneTools.has(intended.name) || renamedTools.has(intended.name);
    const keys = Object.keys(intended.args);
    const fits = (kind: FaultKind): boolean => {
      if (toolTaken) return kind !== 'tool_gone' && kind !== 'renamed_tool';
      if (kind === 'bad_argument') return keys.length > 0;
      if (kind === 'tool_gone') return !options.writeTools.has(intended.name);
      return true;
    };
    let kind: FaultKind = 'unavailable';
    for (let tries = 0; tries < 8; tries += 1) {
      const candidate = FAULT_KINDS[Math.floor(random() * FAULT_KINDS.length)] as FaultKind;
      if (fits(candidate)) {
        kind = candidate;
        break;
      }
    }
    const fault: PlannedFault = { kind, turn: position.turn, call: position.call, toolName: intended.name };
    if (kind === 'bad_argument') {
      const key = keys[Math.floor(random() * keys.length)] as string;
      fault.badKey = { key, sentAs: misspelledKey(key) };
    }
    if (kind === 'tool_gone') goneTools.add(intended.name);
    if (kind === 'renamed_tool') renamedTools.set(intended.name, `${intended.name}_v2`);
    faults.push(fault);
  }
  faults.sort((a, b) => a.turn - b.turn || a.call - b.call);
  return { taskId: task.id, faults, goneTools, renamedTools };
}
