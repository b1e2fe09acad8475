/**
 * The dashboard's HTTP rules, apart from what it serves: the security headers and request checks
 * every request passes, the JSON answers (redacted whole), the API's errors, and the parsing of
 * query parameters and action bodies.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Redactor } from '../core/redact.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import type { ToolDeadLetterKind } from '../worker/dead-letter-metrics.ts';
import type { ToolEntryFilter } from './dashboard-entries.ts';

const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The largest action body the dashboard reads, in bytes. */
const MAX_ACTION_BODY_BYTES = 65_536;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** An HTTP status the API answers with. */
export type ApiStatus = 200 | 202 | 400 | 401 | 403 | 404 | 409 | 413 | 500 | 503;

/** An error the API answers with: HTTP status, a code and a message. */
export class ApiError extends Error {
  constructor(
    readonly status: Exclude<ApiStatus, 200 | 202>,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Sends `payload` as JSON, through the redactor whole. */
export type SendJson = (c: Context, payload: unknown, status?: ApiStatus) => Response;

/** A JSON sender whose every answer goes through `redactor` first and is never cached. */
export function jsonSender(redactor: Redactor): SendJson {
  return (c, payload, status = 200) =>
    c.body(JSON.stringify(redactor.value(payload)), status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Whether a request presents `token` in `Authorization: Bearer …` (compared in constant time). */
export function tokenCheck(token: string): (c: Context) => boolean {
  const tokenDigest = digest(token);
  return (c) => {
    const match = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '');
    return match !== null && timingSafeEqual(digest(match[1]!.trim()), tokenDigest);
  };
}

function hostName(hostHeader: string): string {
  return hostHeader.startsWith('[') ? hostHeader.slice(0, hostHeader.indexOf(']') + 1) : hostHeader.split(':')[0]!;
}

/** What {@link installGuards} checks requests against. */
export interface GuardOptions {
  loopback: boolean;
  readOnly: boolean;
  hasToken: (c: Context) => boolean;
  send: SendJson;
}

/**
 * The rules every request passes, and the error answers: security headers on every answer; on
 * loopback a `Host` naming the loopback address; no API read from another site's page, and off
 * loopback the token on every API read; actions
 * are POST only, from this page (`Origin`, `Sec-Fetch-Site`), with the token and a JSON body of at
 * most 64 KiB, and refused when read-only.
 */
export function installGuards(app: Hono, options: GuardOptions): void {
  const { loopback, readOnly, hasToken, send } = options;
  app.onError((error, c) => {
    if (error instanceof ApiError) return send(c, { error: { code: error.code, message: error.message } }, error.status);
    if (ToolrunError.is(error))
      return send(c, { error: { code: error.code, message: error.message } }, error.code === 'INVALID_OPTIONS' || error.code === 'INVALID_INPUT' ? 400 : 500);
    return send(c, { error: { code: 'INTERNAL', message: error instanceof Error ? error.message : String(error) } }, 500);
  });

  app.use('*', async (c, next) => {
    c.header('content-security-policy', CONTENT_SECURITY_POLICY);
    c.header('x-content-type-options', 'nosniff');
    c.header('referrer-policy', 'no-referrer');
    c.header('x-frame-options', 'DENY');
    c.header('cross-origin-opener-policy', 'same-origin');
    c.header('cross-origin-resource-policy', 'same-origin');
    const host = c.req.header('host') ?? '';
    if (loopback && !LOOPBACK_HOSTS.has(hostName(host))) {
      throw new ApiError(403, 'FORBIDDEN_HOST', 'this dashboard answers only to 127.0.0.1, localhost or [::1] (Host header)');
    }
    // another site's page (a form, an image, a fetch) neither acts nor makes the dashboard read both DLQs
    const refuseCrossSite = (what: string) => {
      const origin = c.req.header('origin');
      if (origin !== undefined && origin !== `http://${host}` && origin !== `https://${host}`) {
        throw new ApiError(403, 'CROSS_ORIGIN', `${what} accepted from this page only (Origin ${origin} is not http://${host})`);
      }
      const fetchSite = c.req.header('sec-fetch-site');
      if (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none')
        throw new ApiError(403, 'CROSS_ORIGIN', `${what} accepted from this page only (Sec-Fetch-Site ${fetchSite})`);
    };
    if (c.req.method === 'GET' || c.req.method === 'HEAD') {
      if (c.req.path.startsWith('/api/')) {
        refuseCrossSite('reads are');
        if (!loopback && !hasToken(c)) throw new ApiError(401, 'TOKEN_REQUIRED', 'off 127.0.0.1 every request needs the token: Authorization: Bearer TOKEN');
      }
      return next();
    }
    if (c.req.method !== 'POST') throw new ApiError(403, 'METHOD_NOT_ALLOWED', 'actions are POST requests');
    refuseCrossSite('actions are');
    if (!hasToken(c)) throw new ApiError(401, 'TOKEN_REQUIRED', 'every action needs the dashboard token (printed when it started) in the Authorization header');
    if (!(c.req.header('content-type') ?? '').toLowerCase().startsWith('application/json'))
      throw new ApiError(400, 'INVALID_INPUT', 'actions take a JSON body (Content-Type: application/json)');
    if (readOnly) throw new ApiError(403, 'READ_ONLY', 'this dashboard was started with --read-only: actions are refused');
    return next();
  });

  // An action's body is a few fields: anything larger is refused before it is read.
  app.use(
    '/api/*',
    bodyLimit({
      maxSize: MAX_ACTION_BODY_BYTES,
      onError: () => {
        throw new ApiError(413, 'BODY_TOO_LARGE', `an action's body is at most ${MAX_ACTION_BODY_BYTES} bytes`);
      },
    }),
  );
}

/** The integer query parameter `name` within `[minimum, maximum]`, else `fallback` when absent. @throws ApiError 400 otherwise. */
export function intParam(
  query: Record<string, string | undefined>,
  name: string,
  { fallback, minimum, maximum }: { fallback: number; minimum: number; maximum: number },
): number {
  const value = query[name];
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < minimum || parsed > maximum)
    throw new ApiError(400, 'INVALID_INPUT', `${name} must be an integer from ${minimum} to ${maximum}, received ${JSON.stringify(value)}`);
  return parsed;
}

/** The tool-DLQ filter of a query. @throws ApiError 400 for an unknown kind. */
export function toolFilterOf(query: Record<string, string | undefined>): ToolEntryFilter {
  const kind = query.kind;
  if (kind !== undefined && kind !== '' && !['tool', 'model', 'run', 'unknown'].includes(kind)) {
    throw new ApiError(400, 'INVALID_INPUT', `kind must be tool, model or run, received ${JSON.stringify(kind)}`);
  }
  return {
    group: query.group || undefined,
    tool: query.tool || undefined,
    reason: query.reason || undefined,
    kind: (kind || undefined) as ToolDeadLetterKind | undefined,
    text: query.text || undefined,
  };
}

function stringField(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new ApiError(400, 'INVALID_INPUT', `${name} must be a string`);
  return value;
}

/** The tool-DLQ filter of an action body's `filter` object. @throws ApiError 400 for a field that is not a string. */
export function toolFilterOfBody(body: Record<string, unknown>): ToolEntryFilter {
  const filter = typeof body.filter === 'object' && body.filter !== null ? (body.filter as Record<string, unknown>) : {};
  return toolFilterOf({
    group: stringField(filter, 'group'),
    tool: stringField(filter, 'tool'),
    reason: stringField(filter, 'reason'),
    kind: stringField(filter, 'kind'),
    text: stringField(filter, 'text'),
  });
}

/** An action's body: a JSON object. @throws ApiError 400 otherwise. */
export async function jsonBody(c: Context): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw new ApiError(400, 'INVALID_INPUT', 'the body is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiError(400, 'INVALID_INPUT', 'the body must be a JSON object');
  return body as Record<string, unknown>;
}
