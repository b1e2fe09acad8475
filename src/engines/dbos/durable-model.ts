import type { Model, ModelResponse } from '../../agent/messages.ts';
import type { DbosEngine } from './dbos-api.ts';
import { modelStepName } from './step-names.ts';

/** A model error as a DBOS step records it: the fields toolrun's classifier reads. */
interface RecordedModelError {
  name: string;
  message: string;
  status?: number;
  statusCode?: number;
  code?: string;
  type?: string;
  headers?: Record<string, string>;
}

type ModelStepOutcome = { ok: true; response: ModelResponse } | { ok: false; error: RecordedModelError };

const MAX_RECORDED_TEXT = 4096;

function headersOf(value: unknown): Record<string, string> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const headers: Record<string, string> = {};
  const entries: Iterable<[string, unknown]> =
    typeof (value as { entries?: unknown }).entries === 'function' && !Array.isArray(value)
      ? (value as { entries(): Iterable<[string, unknown]> }).entries()
      : Object.entries(value);
  let count = 0;
  for (const [key, item] of entries) {
    if (count++ >= 64) break;
    if (typeof item === 'string' || typeof item === 'number') headers[key.toLowerCase()] = String(item).slice(0, 256);
  }
  return headers;
}

/** The fields of a thrown value the classifier reads (status, code, headers), bounded. */
function recordError(thrown: unknown): RecordedModelError {
  if (typeof thrown !== 'object' || thrown === null) return { name: 'Error', message: String(thrown).slice(0, MAX_RECORDED_TEXT) };
  const source = thrown as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' ? value.slice(0, MAX_RECORDED_TEXT) : undefined);
  const recorded: RecordedModelError = { name: text(source.name) ?? 'Error', message: text(source.message) ?? '' };
  if (typeof source.status === 'number') recorded.status = source.status;
  if (typeof source.statusCode === 'number') recorded.statusCode = source.statusCode;
  const code = text(source.code);
  if (code !== undefined) recorded.code = code;
  const type = text(source.type);
  if (type !== undefined) recorded.type = type;
  const headers = headersOf(source.headers ?? source.responseHeaders);
  if (headers !== undefined) recorded.headers = headers;
  return recorded;
}

/** The recorded error as an `Error` again, with the fields the classifier reads. */
function reviveError(recorded: RecordedModelError): Error {
  const error = new Error(recorded.message);
  error.name = recorded.name;
  const { name: _name, message: _message, ...fields } = recorded;
  return Object.assign(error, fields);
}

/**
 * The model with each call (each attempt of toolrun's model policy) run as a DBOS step named
 * `toolrun.model:<stepIndex>`: a recovered or forked workflow reads the recorded answer instead of
 * calling the model again. A thrown error is recorded as its name, message, status, code and
 * headers (texts bounded to 4 KiB) and thrown again, revived, on replay, so toolrun classifies it
 * the same way.
 */
export function durableModel(engine: DbosEngine, model: Model): Model {
  return async (request) => {
    const outcome = await engine.runStep(
      async (): Promise<ModelStepOutcome> => {
        try {
          return { ok: true, response: await model(request) };
        } catch (error) {
          return { ok: false, error: recordError(error) };
        }
      },
      { name: modelStepName(request.stepIndex) },
    );
    if (outcome.ok) return outcome.response;
    throw reviveError(outcome.error);
  };
}
