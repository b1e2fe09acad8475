import type { JsonValue } from '../core/ports/stores.ts';

/** What the loop keeps per tool during a run, for the in-band retry budget. */
export interface ToolBudgetState {
  /** Tool executions spent in this run. */
  attempts: number;
  /** Retries (attempts beyond the first of each call) spent in this run. */
  retries: number;
  /** The last call of this tool failed with an environment failure after its retries. */
  lastFailedTransient: boolean;
  lastError: { kind: string; status: number | null; message: string } | null;
}

/** Why a run ended in `tool_failed`: everything the tool-DLQ entry needs. */
export interface ToolFailureInfo {
  stepIndex: number;
  callIndex: number;
  toolName: string;
  /** The call's arguments, unredacted (the DLQ entry redacts them). */
  toolArgs: unknown;
  attempts: number;
  lastError: { kind: string; status: number | null; message: string };
  reason: 'retry-budget-exhausted' | 'session-breaker-open' | 'misconfiguration' | 'circuit-open';
}

/** Reads the per-tool budget state out of a checkpoint's JSON. */
export function readBudgets(data: { [key: string]: JsonValue } | undefined): Record<string, ToolBudgetState> {
  const raw = data?.budgets;
  if (raw === undefined || raw === null || typeof raw !== 'object' || Array.isArray(raw)) return {};
  return structuredClone(raw) as unknown as Record<string, ToolBudgetState>;
}
