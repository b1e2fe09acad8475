/**
 * What the steps of one tool call share: the call's identity and what the steps found out so far,
 * and the runtime's parts every step reads. Each step returns one {@link StepOutcome}; the runtime
 * turns a failed outcome into the failure envelope and a successful one into the next step's input.
 */
import type { Clock, RandomSource } from '../../ground/ports/clock.ts';
import type { Outcome, ToolWarning } from '../../ground/tool-result.ts';
import type { SessionBreakers } from '../../policies/session-breaker.ts';
import type { SharedBreaker } from '../../policies/shared-breaker.ts';
import type { EnvelopeBounds } from '../bound-envelope.ts';
import type { FailureParts } from '../build-failure.ts';
import type { Redactor } from '../redact.ts';
import type { AttemptRecord, ToolCallRecord } from '../tool-call-record.ts';
import type { RegisteredTool, ToolRegistry } from '../tool-registry.ts';
import type { TurnGuard } from '../turn-guard.ts';
import type { ToolRunInput } from '../tool-run-input.ts';

/** One call in progress. Steps fill in what they learn (the tool, the arguments, the error record). */
export interface CallState {
  /** The caller's input, as given (possibly not an object: then `{}`). */
  readonly input: Partial<ToolRunInput>;
  readonly startedAt: number;
  readonly traceId: string;
  readonly callId: string;
  readonly sessionId: string;
  /** The name the model sent. */
  readonly requestedName: string;
  /** The name the envelope shows: the resolved tool's, or the requested one redacted and bounded. */
  toolName: string;
  tool: RegisteredTool | undefined;
  /** The arguments as far as the steps got: raw, parsed, then validated (coerced, defaults applied). */
  args: unknown;
  readonly normalisations: string[];
  /** The attempts so far (replaced by an array of one at the first). */
  attempts: AttemptRecord[];
  /** Warnings for the success envelope (undeclared arguments), set by validation; absent when none. */
  warnings?: ToolWarning[];
  /** The developer record's error, when a step knows more than the envelope says. */
  errorRecord: ToolCallRecord['error'];
  /** The failure says the tool is misconfigured for everyone (it feeds the shared breaker). */
  misconfiguration: boolean;
  /** A shared-breaker probe this call holds and has not reported: released when the call ends. */
  heldProbe: { id: string | undefined } | undefined;
  /** The developer record, once built (for `onCallEnd`; `execute` returns the same object). */
  record: ToolCallRecord | undefined;
}

/** Why a step ended the call: the parts of the failure envelope. */
export interface StepFailure {
  parts: FailureParts;
  /** The suggestion is the tool's own: failure patterns do not rephrase it. */
  toolSuggested?: boolean;
}

/** What a step returns: its value for the next step, or the failure that ends the call. */
export type StepOutcome<T> = Outcome<T, StepFailure>;

/** The outcome of a step that passes with nothing to hand on (shared: the success path allocates none). */
export const STEP_PASSED: { readonly ok: true; readonly value: undefined } = Object.freeze({ ok: true, value: undefined });

/** Shorthand for a failed outcome. */
export function stepFailed(parts: FailureParts, toolSuggested = false): { ok: false; failure: StepFailure } {
  return { ok: false, failure: toolSuggested ? { parts, toolSuggested } : { parts } };
}

/** The runtime's parts the steps use (built once by `createToolRuntime`). */
export interface PipelineParts {
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly registry: ToolRegistry;
  readonly redactor: Redactor;
  /** The redactor the envelopes are bounded with: `redactor`, remembering the short texts it found clean. */
  readonly envelopeRedactor: Redactor;
  readonly bounds: EnvelopeBounds;
  readonly sessionBreakers: SessionBreakers | undefined;
  readonly sharedBreaker: SharedBreaker | undefined;
  readonly turnGuard: TurnGuard;
  readonly resolveToolNames: boolean;
  readonly defaultTimeoutMs: number;
  readonly callBudgetMs: number;
  readonly maxInFlightCalls: number;
  readonly maxOutputBytes: number;
  readonly outputOverflow: 'fail' | 'truncate';
  readonly onAuthError:
    ((context: { toolName: string; sessionId: string; runId: string | undefined; message: string }) => boolean | Promise<boolean>) | undefined;
  /** Parses a raw argument text, cutting excerpts from redacted text. */
  readonly parseOptions: { redactText: (text: string) => string };
  /** A tool's own error text for the model: stack lines and host paths removed, redacted, bounded. */
  readonly modelText: (text: string) => string;
  /** Whether `value` is a `CALL_LIMIT_EXCEEDED` envelope this runtime returned (a tool that recursed returns one). */
  readonly isLimitEnvelope: (value: unknown) => boolean;
}
