/**
 * The 14 airline tools as toolrun tool definitions that call the local airline service
 * (`http-service.ts`) with `fetch`, and turn its HTTP answers into `ToolError`s.
 */
import { ToolError } from '../../src/core/tool-error.ts';
import { AIRLINE_TOOL_NAMES, AIRLINE_WRITE_TOOLS, type AirlineToolName } from './operations.ts';
import { parseRetryAfter } from '../../src/policies/retry-after.ts';
import { loadAirlineToolSchemas, type AirlineToolSchema } from './tool-schemas.ts';
import { defineAirlineTool, type AirlineToolContext, type AirlineToolDefinition } from './tool-definition-shape.ts';

/** Options of {@link createAirlineHttpTools}. */
export interface AirlineHttpToolsOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:54321`. */
  baseUrl: string;
  /** The run the calls belong to (`x-run-id`). @defaultValue the call's `context.runId`, else its `sessionId` */
  runId?: string;
  /**
   * Which database the calls work on (`x-database-key`), from the run id. Map the runs of one
   * conversation to one key so a later run sees what an earlier one booked.
   * @defaultValue the run id
   */
  databaseKey?: (runId: string) => string;
  /** The fetch to use. @defaultValue `globalThis.fetch` */
  fetch?: typeof fetch;
  /** Per-attempt timeout of every tool, in milliseconds. @defaultValue the runtime's */
  timeoutMs?: number;
  /** Clock for `Retry-After` HTTP-dates, in ms since the epoch. @defaultValue `Date.now` */
  now?: () => number;
  /** The schemas to advertise. @defaultValue `loadAirlineToolSchemas()` (shared data) */
  schemas?: ReadonlyMap<string, AirlineToolSchema>;
}

interface ServiceErrorBody {
  error?: { kind?: string; message?: string; code?: string };
}

async function readErrorBody(response: Response): Promise<ServiceErrorBody['error']> {
  try {
    return ((await response.json()) as ServiceErrorBody).error;
  } catch {
    return undefined;
  }
}

/**
 * Maps a non-2xx answer of the service to a `ToolError`:
 * 401 → `auth`; 403 → `forbidden`; 404 → `not_found`; 409 → `precondition`; 400/422 → `invalid_input`;
 * 429 → `rate_limit` with `retryAfterMs` from `Retry-After`; 5xx and anything else → `server`.
 * The service's message and code are kept.
 */
export async function toolErrorFromResponse(response: Response, nowMs: number): Promise<ToolError> {
  const body = await readErrorBody(response);
  const status = response.status;
  const message = body?.message ?? `HTTP ${status}`;
  const code = body?.code;
  const base = { status, message, ...(code === undefined ? {} : { code }) };
  switch (status) {
    case 401:
      return new ToolError({ kind: 'auth', ...base });
    case 403:
      return new ToolError({ kind: 'forbidden', ...base });
    case 404:
      return new ToolError({ kind: 'not_found', ...base });
    case 409:
      return new ToolError({ kind: 'precondition', ...base });
    case 400:
    case 422:
      return new ToolError({ kind: 'invalid_input', ...base });
    case 429: {
      const retryAfterMs = parseRetryAfter(response.headers, nowMs);
      return new ToolError({ kind: 'rate_limit', ...base, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
    }
    default:
      return new ToolError({ kind: 'server', ...base });
  }
}

/**
 * The 14 airline tools, each calling `POST <baseUrl>/tools/<name>`.
 *
 * Every request carries `x-run-id`, `x-database-key`, `idempotency-key` (the call's
 * `context.idempotencyKey`, stable across retries) and `x-attempt`, and is aborted by
 * `context.signal`. Every tool is marked `idempotent`: reads are, and the service applies a write
 * once per idempotency key (a retry after a timeout gets the stored answer), so the runtime may
 * retry a write after an ambiguous failure. Writes name `transfer_to_human_agents` as their
 * fallback; `passengers` is sensitive.
 * `execute` resolves to the tool's result (JSON); it rejects with a `ToolError` for an HTTP
 * failure answer, and with fetch's own error (network failure, `AbortError`) otherwise.
 *
 * @throws Error when no `schemas` are given and the shared data is absent.
 */
export function createAirlineHttpTools(options: AirlineHttpToolsOptions): AirlineToolDefinition[] {
  const schemas = options.schemas ?? loadAirlineToolSchemas();
  const doFetch = options.fetch ?? globalThis.fetch;
  const now = options.now ?? Date.now;
  const baseUrl = options.baseUrl.replace(/\/+$/, '');

  const call = async (toolName: AirlineToolName, args: Record<string, unknown>, context: AirlineToolContext): Promise<unknown> => {
    const runId = options.runId ?? context.runId ?? context.sessionId;
    const response = await doFetch(`${baseUrl}/tools/${toolName}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-run-id': runId,
        'x-database-key': options.databaseKey?.(runId) ?? runId,
        'idempotency-key': context.idempotencyKey,
        'x-attempt': String(context.attempt),
      },
      body: JSON.stringify(args),
      signal: context.signal,
    });
    if (!response.ok) throw await toolErrorFromResponse(response, now());
    const body = (await response.json()) as { result?: unknown };
    return body.result;
  };

  return AIRLINE_TOOL_NAMES.map((toolName) => {
    const schema = schemas.get(toolName);
    if (schema === undefined) throw new Error(`toolrun airline example: no schema for tool ${toolName} in tools.airline.json`);
    const isWrite = AIRLINE_WRITE_TOOLS.has(toolName);
    return defineAirlineTool({
      name: toolName,
      description: schema.description,
      inputSchema: schema.parameters,
      execute: (args, context) => call(toolName, args, context),
      idempotent: true,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(isWrite ? { fallbacks: ['transfer_to_human_agents'] } : {}),
      ...(toolName === 'book_reservation' || toolName === 'update_reservation_passengers' ? { sensitive: ['passengers'] } : {}),
    });
  });
}
