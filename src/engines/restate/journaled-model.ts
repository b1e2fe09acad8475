import type { Model, ModelResponse } from '../../agent/messages.ts';
import { classifyError, type ClassifiedKind } from '../../core/classify-error.ts';
import { ModelResponseError, ToolError } from '../../core/tool-error.ts';
import type { SharedBreaker } from '../../policies/shared-breaker.ts';
import { step, type RestateStepContext, type StepRetryOptions } from './restate-steps.ts';

/** A model call's failure as journaled: what toolrun's model policy classifies it by. */
interface JournaledModelError {
  kind: ClassifiedKind;
  status: number | null;
  message: string;
  retryAfterMs?: number;
  misconfiguration: boolean;
  transient: boolean;
}

type JournaledModelCall = { ok: true; response: ModelResponse } | { ok: false; error: JournaledModelError };

/** The thrown value rebuilt from its journaled classification, so the model policy classifies it as it did the original. */
function rebuildError(error: JournaledModelError): Error {
  if (error.kind === 'invalid_response') return new ModelResponseError(error.message);
  if (error.kind === 'cancelled') return Object.assign(new Error(error.message), { name: 'AbortError' });
  if (error.kind === 'exception') return new Error(error.message);
  return new ToolError({
    kind: error.kind,
    message: error.message,
    ...(error.status !== null ? { status: error.status } : {}),
    ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
    misconfiguration: error.misconfiguration,
    transient: error.transient,
  });
}

/**
 * The model with each call a journaled Restate step (`toolrun.model`): a retried invocation reads
 * the answer (or the failure) of a call already made instead of calling the model again. A failure
 * is journaled as its classification (kind, status, `Retry-After`, broken for everyone or not) and
 * thrown again from it, so toolrun's model policy decides the retries, in-band, as it does outside
 * Restate. The step itself is not retried by Restate.
 */
export function modelInRestate(context: RestateStepContext, model: Model): Model {
  const journaled: Model = async (request) => {
    const outcome = await step(
      context,
      'toolrun.model',
      async (): Promise<JournaledModelCall> => {
        try {
          const response = await model(request);
          return { ok: true, response: JSON.parse(JSON.stringify(response)) as ModelResponse };
        } catch (thrown) {
          const classified = classifyError(thrown, { nowMs: Date.now(), target: 'fixed' });
          return {
            ok: false,
            error: {
              kind: classified.kind,
              status: classified.status,
              message: classified.message,
              ...(classified.retryAfterMs !== undefined ? { retryAfterMs: classified.retryAfterMs } : {}),
              misconfiguration: classified.misconfiguration,
              transient: classified.transient,
            },
          };
        }
      },
      { maxRetryAttempts: 1 },
    );
    if (!outcome.ok) throw rebuildError(outcome.error);
    return outcome.response;
  };
  const name = (model as { modelName?: unknown }).modelName;
  if (typeof name === 'string') Object.assign(journaled, { modelName: name });
  else Object.defineProperty(journaled, 'name', { value: model.name });
  return journaled;
}

/**
 * The shared model breaker with each read and report a journaled step, so the model policy takes
 * the same decisions when a retried invocation replays them (the breaker is shared state other
 * runs change meanwhile). Its failures are journaled as failures; the policy fails open on them.
 */
export function breakerInRestate(context: RestateStepContext, breaker: SharedBreaker, retry: StepRetryOptions): SharedBreaker {
  return {
    acquire: (key) => step(context, 'toolrun.model-breaker.acquire', () => breaker.acquire(key), retry),
    recordSuccess: (key, probeId) => step(context, 'toolrun.model-breaker.success', () => breaker.recordSuccess(key, probeId), retry),
    recordFailure: (key, error, probeId) => step(context, 'toolrun.model-breaker.failure', () => breaker.recordFailure(key, error, probeId), retry),
    releaseProbe: (key, probeId) => step(context, 'toolrun.model-breaker.release', () => breaker.releaseProbe(key, probeId), retry),
    state: (key) => step(context, 'toolrun.model-breaker.state', () => breaker.state(key), retry),
  };
}
