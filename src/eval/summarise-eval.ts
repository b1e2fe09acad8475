/**
 * Per-arm numbers of an eval with their 95 % intervals: Wilson for rates, percentile bootstrap
 * (seeded) for means and ratios.
 */
import { createSeededRandom } from '../testing/seeded-random.ts';
import type { EvalArm } from './arm-executors.ts';
import { FAULT_KINDS, type FaultKind } from './fault-plan.ts';
import type { EvalTaskOutcome } from './run-eval-task.ts';
import { bootstrapMeanInterval, bootstrapRatioInterval, wilsonInterval, type Interval } from './statistics.ts';

/** The numbers of one arm. */
export interface ArmSummary {
  arm: EvalArm;
  /** What the model reads in this arm, e.g. `AI SDK default error text (ai 6.0.326)`. */
  label: string;
  tasks: number;
  successes: number;
  /** Share of tasks solved (Wilson). */
  taskSuccess: Interval;
  /** Planned faults that happened, `tool_gone` left out (it cannot be recovered from). */
  recoverableFaults: number;
  recoveredFaults: number;
  /** Share of those faults after which the intended call succeeded (Wilson). */
  recoveryRate: Interval;
  /** Mean failed tool calls per task (bootstrap). */
  wastedCallsPerTask: Interval;
  /** Tokens of all tasks divided by the tasks solved (bootstrap over tasks). */
  tokensPerSuccess: Interval;
  /** Writes the service applied more than once (must be 0). */
  duplicatedWrites: number;
  modelCalls: number;
  toolCalls: number;
  serviceRequests: number;
  /** Per fault kind: happened and recovered. */
  byFault: Record<FaultKind, { fired: number; recovered: number }>;
}

/**
 * Summarises one arm's task outcomes. The bootstrap draws from `createSeededRandom(seed)`, so the
 * same outcomes and seed give the same intervals.
 */
export function summariseArm(options: {
  arm: EvalArm;
  label: string;
  outcomes: readonly EvalTaskOutcome[];
  duplicatedWrites: number;
  seed: number;
}): ArmSummary {
  const { outcomes } = options;
  const byFault = Object.fromEntries(FAULT_KINDS.map((kind) => [kind, { fired: 0, recovered: 0 }])) as Record<FaultKind, { fired: number; recovered: number }>;
  for (const outcome of outcomes) {
    for (const fault of outcome.faults) {
      if (!fault.fired) continue;
      byFault[fault.kind].fired += 1;
      if (fault.recovered) byFault[fault.kind].recovered += 1;
    }
  }
  const recoverableFaults = FAULT_KINDS.filter((kind) => kind !== 'tool_gone').reduce((sum, kind) => sum + byFault[kind].fired, 0);
  const recoveredFaults = FAULT_KINDS.reduce((sum, kind) => sum + byFault[kind].recovered, 0);
  const successes = outcomes.filter((outcome) => outcome.success).length;
  const sum = (pick: (outcome: EvalTaskOutcome) => number) => outcomes.reduce((total, outcome) => total + pick(outcome), 0);
  return {
    arm: options.arm,
    label: options.label,
    tasks: outcomes.length,
    successes,
    taskSuccess: wilsonInterval(successes, outcomes.length),
    recoverableFaults,
    recoveredFaults,
    recoveryRate: wilsonInterval(recoveredFaults, recoverableFaults),
    wastedCallsPerTask: bootstrapMeanInterval(
      outcomes.map((outcome) => outcome.failedToolCalls),
      createSeededRandom(options.seed),
    ),
    tokensPerSuccess: bootstrapRatioInterval(
      outcomes.map((outcome) => ({ numerator: outcome.tokens, denominator: outcome.success ? 1 : 0 })),
      createSeededRandom(options.seed + 1),
    ),
    duplicatedWrites: options.duplicatedWrites,
    modelCalls: sum((outcome) => outcome.modelCalls),
    toolCalls: sum((outcome) => outcome.toolCalls),
    serviceRequests: sum((outcome) => outcome.serviceRequests),
    byFault,
  };
}
