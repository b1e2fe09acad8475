/**
 * The shapes the recovery eval works on: a task (a conversation with the tool calls a correct agent
 * makes, turn by turn), the workload that supplies tasks and a service to call, and one call to it.
 * Workload-neutral: the τ-bench airline workload (examples/airline/eval-workload.ts) is one.
 */
import type { ChatMessage } from '../agent/messages.ts';

/** One tool call a correct agent makes: the tool's name and its arguments (a JSON object). */
export interface IntendedCall {
  name: string;
  args: Record<string, unknown>;
}

/** One customer turn of a task: the customer's message, the calls that answer it, the reply. */
export interface TaskTurn {
  /** The customer's message that opens the turn. */
  userMessage: string;
  /** The calls a correct agent makes for it, in order (each succeeds when no fault is injected). */
  calls: IntendedCall[];
  /** The agent's reply to the customer that closes the turn. */
  reply: string;
}

/** One task: a system prompt and its customer turns. */
export interface EvalTask {
  /** Stable id, e.g. `t3-trial0`. */
  id: string;
  system: string;
  turns: TaskTurn[];
}

/** A tool as offered to the model (OpenAI function format). */
export interface EvalToolSchema {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** A fault the service injects into one request (chosen by the fault plan, not drawn by the service). */
export type ServiceFault = 'unavailable' | 'rate_limit' | 'hang';

/** One request to the workload's service. */
export interface ServiceCall {
  /** Which database the call works on: one per task and arm. */
  databaseKey: string;
  toolName: string;
  args: Record<string, unknown>;
  /** A write sent again with the same key is answered from the stored response, never applied twice. */
  idempotencyKey: string;
  /** A fault to inject into this request. @defaultValue none */
  fault?: ServiceFault;
  signal: AbortSignal;
}

/** A running service of a workload. */
export interface EvalService {
  /**
   * Calls one tool. Resolves to its result; rejects with a `ToolError` for an HTTP failure answer
   * (429 with `retryAfterMs`, 503 as `server`, business refusals) and with fetch's own error
   * (an `AbortError` / `TimeoutError`) when the signal aborts.
   */
  call(request: ServiceCall): Promise<unknown>;
  /** A digest of a database's content (equal digests: equal databases); `undefined` for a database never used. */
  databaseDigest(databaseKey: string): string | undefined;
  /** Writes applied more than once for one (database, idempotency key), over the whole service. */
  duplicatedWrites(): number;
  close(): Promise<void>;
}

/** A source of tasks and the service they run against. */
export interface EvalWorkload {
  /** What the tasks are, for the report (e.g. `τ-bench airline (gpt-4o trajectories, reward 1)`). */
  description: string;
  tasks: EvalTask[];
  tools: EvalToolSchema[];
  /** Names of the tools that change the service's data. */
  writeTools: ReadonlySet<string>;
  /** Starts the service (faults only from {@link ServiceCall.fault}). `retryAfterSeconds` is the `Retry-After` of an injected 429. */
  startService(options: { retryAfterSeconds: number }): Promise<EvalService>;
}

/** The messages a task starts with: its system prompt and first customer message. */
export function initialMessages(task: EvalTask): ChatMessage[] {
  const first = task.turns[0];
  return [{ role: 'system', content: task.system }, ...(first === undefined ? [] : [{ role: 'user' as const, content: first.userMessage }])];
}

/** Canonical JSON of a value (object keys sorted), to compare arguments. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as Record<string, unknown>)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
