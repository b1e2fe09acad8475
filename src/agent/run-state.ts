import type { FailureCause } from '../ground/failure-cause.ts';
import type { JsonValue } from '../ground/ports/run-journal.ts';
import type { ModelFailureInfo } from './model-policy.ts';

/** What the loop keeps per tool during a run, for the in-band retry budget. */
export interface ToolBudgetState {
  /** Tool executions spent in this run. */
  attempts: number;
  /** Retries (attempts beyond the first of each call) spent in this run. */
  retries: number;
  /** The last call of this tool failed with an environment failure after its retries. */
  lastFailedTransient: boolean;
  lastError: FailureCause | null;
}

/** Why a run ended in `tool_failed`: everything the tool-DLQ entry needs. */
export interface ToolFailureInfo {
  stepIndex: number;
  callIndex: number;
  toolName: string;
  /** The call's arguments: as the model sent them in memory; redacted and bounded once checkpointed. */
  toolArgs: unknown;
  attempts: number;
  lastError: FailureCause;
  reason: 'retry-budget-exhausted' | 'session-breaker-open' | 'misconfiguration' | 'circuit-open';
}

/** The version of the run state the loop writes into a checkpoint's `data`. */
export const RUN_STATE_VERSION = 1;

/**
 * The loop's state kept with a run checkpoint (`RunCheckpoint.data`), typed and versioned. Written
 * by {@link encodeRunState}, read by {@link decodeRunState}: no other module reads the JSON.
 */
export interface RunState {
  version: typeof RUN_STATE_VERSION;
  /** Per tool: the in-band budget spent. */
  budgets: Record<string, ToolBudgetState>;
  /** The last model turn asked for tool calls that have not all been answered: a resume runs them, not the model. */
  pendingStep: boolean;
  /** The final answer of a completed run. */
  text?: string;
  /** Why the run ended `tool_failed`. */
  failure?: ToolFailureInfo;
  /** Why the run ended `model_failed` (and the message, redacted). */
  modelFailure?: ModelFailureInfo;
  modelError?: string;
}

/** The JSON of a run state, for `RunCheckpoint.data`. */
export function encodeRunState(state: Omit<RunState, 'version'>): { [key: string]: JsonValue } {
  return {
    version: RUN_STATE_VERSION,
    budgets: state.budgets as unknown as JsonValue,
    pendingStep: state.pendingStep,
    ...(state.text !== undefined ? { text: state.text } : {}),
    ...(state.failure ? { failure: state.failure as unknown as JsonValue } : {}),
    ...(state.modelFailure ? { modelFailure: state.modelFailure as unknown as JsonValue } : {}),
    ...(state.modelError !== undefined ? { modelError: state.modelError } : {}),
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isCause = (value: unknown): value is FailureCause =>
  isRecord(value) && typeof value.kind === 'string' && typeof value.message === 'string' && (value.status === null || typeof value.status === 'number');

function decodeBudgets(raw: unknown): Record<string, ToolBudgetState> {
  if (!isRecord(raw)) return {};
  const budgets: Record<string, ToolBudgetState> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (!isRecord(value)) continue;
    budgets[name] = {
      attempts: typeof value.attempts === 'number' ? value.attempts : 0,
      retries: typeof value.retries === 'number' ? value.retries : 0,
      lastFailedTransient: value.lastFailedTransient === true,
      lastError: isCause(value.lastError) ? { kind: value.lastError.kind, status: value.lastError.status, message: value.lastError.message } : null,
    };
  }
  return budgets;
}

/**
 * Reads the run state out of a checkpoint's `data`: this version, or the unversioned state that
 * toolrun wrote before (same fields). Anything malformed reads as absent (a fresh budget, no
 * failure), never as a throw: a run whose state was damaged resumes rather than loops.
 */
export function decodeRunState(data: { [key: string]: JsonValue } | undefined): RunState {
  const raw: Record<string, unknown> = isRecord(data) ? data : {};
  const failure = raw.failure;
  const modelFailure = raw.modelFailure;
  return {
    version: RUN_STATE_VERSION,
    budgets: decodeBudgets(raw.budgets),
    pendingStep: raw.pendingStep === true,
    ...(typeof raw.text === 'string' ? { text: raw.text } : {}),
    ...(isRecord(failure) && typeof failure.stepIndex === 'number' && typeof failure.toolName === 'string' && isCause(failure.lastError)
      ? { failure: failure as unknown as ToolFailureInfo }
      : {}),
    ...(isRecord(modelFailure) && typeof modelFailure.stepIndex === 'number' && typeof modelFailure.modelName === 'string' && isRecord(modelFailure.lastError)
      ? { modelFailure: modelFailure as unknown as ModelFailureInfo }
      : {}),
    ...(typeof raw.modelError === 'string' ? { modelError: raw.modelError } : {}),
  };
}
