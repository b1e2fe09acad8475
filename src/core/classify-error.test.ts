import fc from 'fast-check';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { createMemoryBreakerStateStore } from '../stores/memory/memory-breaker-state-store.ts';
import { MAX_RETRY_AFTER_MS } from '../policies/retry-after.ts';
import { createSharedBreaker } from '../policies/shared-breaker.ts';
import { createFakeClock } from '../testing/fake-clock.ts';
import { createAutoAdvancingClock } from '../testing/auto-advancing-clock.ts';
import { classifyError, classifyModelError, kindFromHttpStatus, type ClassifiedError } from './classify-error.ts';
import { createToolRuntime } from './create-tool-runtime.ts';
import { FAILURE_CODES } from '../ground/failure-codes.ts';
import { ModelResponseError, ToolError } from './tool-error.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';

/** Wed, 15 Jan 2025 12:00:00 GMT */
const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);
const at = { nowMs: NOW };

/** What undici's `fetch` rejects with when the host does not resolve. */
function unresolvableHost(hostname: string): TypeError {
  const cause = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', errno: -3008, syscall: 'getaddrinfo', hostname });
  return new TypeError('fetch failed', { cause });
}

function pick(classified: ClassifiedError) {
  const { kind, code, status, transient, ambiguous, misconfiguration, retryAfterMs } = classified;
  return { kind, code, status, transient, ambiguous, misconfiguration, retryAfterMs };
}

describe('misconfiguration: a failure caused by one call’s own arguments never opens the shared breaker', () => {
  it('two model-supplied URLs with unresolvable hosts do not block a third run to a good host', async () => {
    const clock = createFakeClock(NOW);
    const breaker = createSharedBreaker({ store: createMemoryBreakerStateStore(), clock });
    const fetched: string[] = [];
    const runtime = createToolRuntime({
      tools: {
        fetch_url: async (args: { url: string }) => {
          fetched.push(args.url);
          const host = new URL(args.url).hostname;
          if (host.endsWith('.invalid')) throw unresolvableHost(host);
          return { status: 200, body: 'ok' };
        },
      },
      sharedBreaker: breaker,
      clock,
    });
    const first = await runtime.execute({ name: 'fetch_url', args: { url: 'https://no-such-host-1.invalid/a' }, runId: 'run-1', sessionId: 's1' });
    const second = await runtime.execute({ name: 'fetch_url', args: { url: 'https://no-such-host-2.invalid/b' }, runId: 'run-2', sessionId: 's2' });
    for (const record of [first, second]) {
      expect(record.misconfiguration).toBe(false);
      expect(record.result).toMatchObject({ status: 'failed', attempts: 1, error: { type: 'environment', code: 'UNAVAILABLE', retryable: false } });
    }
    expect(second.result.status === 'failed' && second.result.error.detail).toContain('getaddrinfo ENOTFOUND no-such-host-2.invalid');
    const third = await runtime.run({ name: 'fetch_url', args: { url: 'https://example.com/' }, runId: 'run-3', sessionId: 's3' });
    expect(third).toMatchObject({ status: 'success', data: { status: 200, body: 'ok' } });
    expect(fetched).toEqual(['https://no-such-host-1.invalid/a', 'https://no-such-host-2.invalid/b', 'https://example.com/']);
    expect(await breaker.state('fetch_url')).toBeUndefined();
  });

  it('by contrast, a credential rejected twice (401) opens it and the third run is not called', async () => {
    const clock = createFakeClock(NOW);
    const breaker = createSharedBreaker({ store: createMemoryBreakerStateStore(), clock });
    let calls = 0;
    const runtime = createToolRuntime({
      tools: {
        crm_lookup: async () => {
          calls += 1;
          throw { status: 401, statusText: 'Unauthorized', headers: { 'www-authenticate': 'Bearer error="invalid_token"' } };
        },
      },
      sharedBreaker: breaker,
      clock,
    });
    expect((await runtime.execute({ name: 'crm_lookup', args: {}, runId: 'run-1' })).misconfiguration).toBe(true);
    expect((await runtime.execute({ name: 'crm_lookup', args: {}, runId: 'run-2' })).misconfiguration).toBe(true);
    expect(await runtime.run({ name: 'crm_lookup', args: {}, runId: 'run-3' })).toMatchObject({ status: 'failed', error: { code: 'CIRCUIT_OPEN' } });
    expect(calls).toBe(2);
  });

  it.each([
    ['ENOTFOUND in cause (fetch failed)', unresolvableHost('no-such-host.invalid')],
    ['ENOTFOUND on the error itself', Object.assign(new Error('getaddrinfo ENOTFOUND api.invalid'), { code: 'ENOTFOUND' })],
    ['an expired certificate', new TypeError('fetch failed', { cause: Object.assign(new Error('certificate has expired'), { code: 'CERT_HAS_EXPIRED' }) })],
  ])('%s: not a misconfiguration by default nor for a URL from the arguments; one for a fixed target', (_label, thrown) => {
    expect(pick(classifyError(thrown, at))).toEqual({
      kind: 'network',
      code: 'UNAVAILABLE',
      status: null,
      transient: false,
      ambiguous: false,
      misconfiguration: false,
      retryAfterMs: undefined,
    });
    expect(classifyError(thrown, { ...at, target: 'url-from-arguments' }).misconfiguration).toBe(false);
    expect(pick(classifyError(thrown, { ...at, target: 'fixed' }))).toMatchObject({
      kind: 'misconfigured',
      code: 'UNAVAILABLE',
      transient: false,
      misconfiguration: true,
    });
  });

  it.each([
    // [status, default, fixed, url-from-arguments]
    [401, true, true, false],
    [402, true, true, false],
    [407, true, true, false],
    [403, false, true, false],
    [404, false, true, false],
    [410, false, true, false],
    [400, false, false, false],
    [422, false, false, false],
    [429, false, false, false],
    [500, false, false, false],
    [503, false, false, false],
  ] as const)('HTTP %d → misconfiguration %s by default, %s for a fixed target, %s for a URL from the arguments', (status, byDefault, forFixed, forUrl) => {
    const thrown = { status, headers: {} };
    expect(classifyError(thrown, at).misconfiguration).toBe(byDefault);
    expect(classifyError(thrown, { ...at, target: 'fixed' }).misconfiguration).toBe(forFixed);
    expect(classifyError(thrown, { ...at, target: 'url-from-arguments' }).misconfiguration).toBe(forUrl);
  });

  it('a 404 is NOT_FOUND for the model to fix (the id may be the model’s), and so is 410 now', () => {
    expect(pick(classifyError({ status: 404 }, at))).toEqual({
      kind: 'not_found',
      code: 'NOT_FOUND',
      status: 404,
      transient: false,
      ambiguous: false,
      misconfiguration: false,
      retryAfterMs: undefined,
    });
    expect(pick(classifyError({ status: 410 }, at))).toMatchObject({ kind: 'not_found', code: 'NOT_FOUND', misconfiguration: false });
    expect(kindFromHttpStatus(410)).toBe('not_found');
  });

  it('a ToolError decides for itself: misconfigured always counts; misconfiguration overrides the kind', () => {
    expect(classifyError(new ToolError({ kind: 'misconfigured', status: 410 }), { ...at, target: 'url-from-arguments' })).toMatchObject({
      code: 'UNAVAILABLE',
      misconfiguration: true,
    });
    expect(classifyError(new ToolError({ kind: 'auth', status: 401 }), at)).toMatchObject({ code: 'AUTH_EXPIRED', misconfiguration: true });
    // a per-user token that expired is that user's problem, not everyone's
    expect(classifyError(new ToolError({ kind: 'auth', status: 401, misconfiguration: false }), at)).toMatchObject({
      code: 'AUTH_EXPIRED',
      misconfiguration: false,
    });
    // a fixed endpoint that is gone
    expect(classifyError(new ToolError({ kind: 'not_found', status: 404, misconfiguration: true }), at)).toMatchObject({
      code: 'NOT_FOUND',
      misconfiguration: true,
    });
    expect(classifyError(new ToolError({ kind: 'not_found' }), { ...at, target: 'fixed' }).misconfiguration).toBe(true);
  });
});

describe('retry hints: status and headers found anywhere in the cause chain', () => {
  it('a 429 wrapped as the cause of an Error is a rate limit, not a tool bug', () => {
    const thrown = new Error('upstream call failed', { cause: { status: 429, headers: { 'Retry-After': '7' } } });
    expect(classifyError(thrown, at)).toEqual({
      code: 'RATE_LIMITED',
      kind: 'rate_limit',
      status: 429,
      transient: true,
      ambiguous: false,
      misconfiguration: false,
      retryAfterMs: 7000,
      message: 'upstream call failed: HTTP 429',
    });
  });

  it.each([
    ['cause of a cause', new Error('a', { cause: new Error('b', { cause: { status: 503, headers: new Headers({ 'retry-after': '2' }) } }) }), 503, 2000],
    [
      'AggregateError.errors',
      new AggregateError([new Error('first'), { statusCode: 429, headers: new Map([['Retry-After-Ms', '1500']]) }], 'all failed'),
      429,
      1500,
    ],
    [
      'axios-style response',
      Object.assign(new Error('Request failed with status code 503'), { response: { status: 503, headers: { 'retry-after': '3' } } }),
      503,
      3000,
    ],
    ['an Error whose cause is a ToolError', new Error('wrapped', { cause: new ToolError({ kind: 'rate_limit', status: 429, retryAfterMs: 4000 }) }), 429, 4000],
  ])('%s', (_label, thrown, status, retryAfterMs) => {
    expect(classifyError(thrown, at)).toMatchObject({ status, transient: true, retryAfterMs });
  });

  it('a wrapped 401 is a rejected credential, a wrapped 400 invalid input', () => {
    expect(classifyError(new Error('x', { cause: { status: 401 } }), at)).toMatchObject({ code: 'AUTH_EXPIRED', misconfiguration: true });
    expect(classifyError(new Error('x', { cause: { status: 400 } }), at)).toMatchObject({ code: 'INVALID_INPUT', transient: false });
  });

  it('the first informative error wins, outermost first; a cycle or a 10,000-deep chain ends', () => {
    expect(classifyError(new Error('outer', { cause: { status: 503 } }), at).status).toBe(503);
    expect(classifyError(Object.assign(new Error('outer'), { status: 500, cause: { status: 429 } }), at).status).toBe(500);
    const cyclic = new Error('cycle') as Error & { cause?: unknown };
    cyclic.cause = cyclic;
    expect(classifyError(cyclic, at)).toMatchObject({ code: 'TOOL_EXCEPTION', kind: 'exception', message: 'cycle' });
    let deep: unknown = { status: 429 };
    for (let index = 0; index < 10_000; index++) deep = new Error(`level ${index}`, { cause: deep });
    // beyond the bound: not found, and found fast (no recursion, no stack overflow)
    expect(classifyError(deep, at).code).toBe('TOOL_EXCEPTION');
    let shallow: unknown = { status: 429 };
    for (let index = 0; index < 6; index++) shallow = new Error(`level ${index}`, { cause: shallow });
    expect(classifyError(shallow, at).code).toBe('RATE_LIMITED');
  });

  it('rate-limit reset headers set retryAfterMs of a 429 (OpenAI style, epoch, IETF), Retry-After first', () => {
    const limited = (headers: Record<string, string>) => classifyError({ status: 429, headers }, at).retryAfterMs;
    expect(limited({ 'x-ratelimit-reset-requests': '6m0s' })).toBe(360_000);
    expect(limited({ 'x-ratelimit-reset-tokens': '1h2m3.5s' })).toBe(3_723_500);
    expect(limited({ 'X-RateLimit-Reset': String(NOW / 1000 + 60) })).toBe(60_000);
    expect(limited({ 'x-ratelimit-reset': String(NOW + 60_000) })).toBe(60_000);
    expect(limited({ 'x-ratelimit-reset': '60' })).toBe(60_000);
    expect(limited({ RateLimit: '"default";r=0;t=60' })).toBe(60_000);
    expect(limited({ 'ratelimit-reset': '60' })).toBe(60_000);
    expect(limited({ 'retry-after': '5', 'x-ratelimit-reset-requests': '6m0s' })).toBe(5000);
    expect(limited({ 'retry-after-ms': '250', 'x-ratelimit-reset-requests': '6m0s' })).toBe(250);
    expect(limited({ 'x-ratelimit-reset-requests': 'soon' })).toBeUndefined();
  });

  it('reset headers are not a wait for a 503 (they come with every answer); Retry-After is', () => {
    expect(classifyError({ status: 503, headers: { 'x-ratelimit-reset-tokens': '6m0s' } }, at).retryAfterMs).toBeUndefined();
    expect(classifyError({ status: 503, headers: { 'retry-after': '2' } }, at).retryAfterMs).toBe(2000);
  });

  it('absurd values: negative and NaN are dropped, 10^15 is capped at 24 h, never Infinity', () => {
    expect(classifyError({ status: 429, headers: { 'retry-after': '-5' } }, at).retryAfterMs).toBeUndefined();
    expect(classifyError({ status: 429, headers: { 'x-ratelimit-reset': 'NaN' } }, at).retryAfterMs).toBeUndefined();
    expect(classifyError({ status: 429, headers: { 'retry-after': '1000000000000000' } }, at).retryAfterMs).toBe(MAX_RETRY_AFTER_MS);
    expect(classifyError({ status: 429, headers: { 'x-ratelimit-reset': '1000000000000000' } }, at).retryAfterMs).toBe(MAX_RETRY_AFTER_MS);
    expect(classifyError({ status: 429, headers: { 'x-ratelimit-reset-requests': `${'9'.repeat(400)}h` } }, at).retryAfterMs).toBe(MAX_RETRY_AFTER_MS);
    expect(classifyError(new ToolError({ kind: 'rate_limit', retryAfterMs: -1 }), at).retryAfterMs).toBeUndefined();
    expect(classifyError(new ToolError({ kind: 'rate_limit', retryAfterMs: Number.NaN }), at).retryAfterMs).toBeUndefined();
    expect(classifyError(new ToolError({ kind: 'rate_limit', retryAfterMs: 1e15 }), at).retryAfterMs).toBe(MAX_RETRY_AFTER_MS);
    expect(classifyError(new ToolError({ kind: 'rate_limit', retryAfterMs: 1.2 }), at).retryAfterMs).toBe(2);
  });

  it('a ToolError may carry the response headers instead of a computed wait', () => {
    const thrown = new ToolError({ kind: 'rate_limit', status: 429, headers: new Headers({ 'x-ratelimit-reset-requests': '20ms' }) });
    expect(classifyError(thrown, at).retryAfterMs).toBe(20);
  });

  it('a 403 with a rate-limit remaining count of 0 (GitHub) is a rate limit until the reset', () => {
    const thrown = { status: 403, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW / 1000 + 90) } };
    expect(pick(classifyError(thrown, at))).toEqual({
      kind: 'rate_limit',
      code: 'RATE_LIMITED',
      status: 403,
      transient: true,
      ambiguous: false,
      misconfiguration: false,
      retryAfterMs: 90_000,
    });
    expect(classifyError({ status: 403, headers: { 'x-ratelimit-remaining': '12' } }, at).code).toBe('PERMISSION_DENIED');
  });

  it('x-should-retry from the server overrides the status', () => {
    expect(classifyError({ status: 409, headers: { 'x-should-retry': 'true' } }, at)).toMatchObject({ transient: true, misconfiguration: false });
    expect(classifyError({ status: 503, headers: { 'x-should-retry': 'false' } }, at)).toMatchObject({ code: 'UNAVAILABLE', transient: false });
  });

  it('in the runtime: a 429 whose reset is 60 s away is not retried inside a 30 s budget, and the envelope says 60 s', async () => {
    let calls = 0;
    const runtime = createToolRuntime({
      tools: {
        chat: async () => {
          calls += 1;
          throw new OpenAI.RateLimitError(
            429,
            { message: 'Rate limit reached for requests' },
            undefined,
            new Headers({ 'x-ratelimit-reset-requests': '1m0s', 'x-ratelimit-remaining-requests': '0' }),
          );
        },
      },
      callBudgetMs: 30_000,
      clock: createAutoAdvancingClock(NOW),
    });
    const result = await runtime.run({ name: 'chat', args: {} });
    expect(calls).toBe(1);
    expect(result).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'RATE_LIMITED', retryable: false, retry_after_ms: 60_000 } });
  });

  it('in the runtime: a wrapped 429 with x-ratelimit-reset-requests 60s waits 60 s before the next attempt', async () => {
    const clock = createAutoAdvancingClock(NOW);
    const calledAt: number[] = [];
    const runtime = createToolRuntime({
      tools: {
        search: async () => {
          calledAt.push(clock.now());
          if (calledAt.length === 1) throw new Error('search backend failed', { cause: { status: 429, headers: { 'x-ratelimit-reset-requests': '60s' } } });
          return { hits: 1 };
        },
      },
      clock,
    });
    expect(await runtime.run({ name: 'search', args: {} })).toMatchObject({ status: 'success', attempts: 2 });
    expect(calledAt).toEqual([NOW, NOW + 60_000]);
  });
});

describe('model SDK errors', () => {
  const headers = (values: Record<string, string> = {}) => new Headers({ 'x-request-id': 'req_1', ...values });

  it.each([
    [
      'RateLimitError with retry-after-ms',
      () => new OpenAI.RateLimitError(429, { message: 'slow down', type: 'requests' }, undefined, headers({ 'retry-after-ms': '1200' })),
      { kind: 'rate_limit', code: 'RATE_LIMITED', status: 429, transient: true, misconfiguration: false, retryAfterMs: 1200 },
    ],
    [
      'RateLimitError with reset headers only',
      () =>
        new OpenAI.RateLimitError(
          429,
          { message: 'tokens' },
          undefined,
          headers({
            'x-ratelimit-reset-tokens': '6m0s',
            'x-ratelimit-remaining-tokens': '0',
            'x-ratelimit-reset-requests': '1s',
            'x-ratelimit-remaining-requests': '59',
          }),
        ),
      { kind: 'rate_limit', status: 429, transient: true, retryAfterMs: 360_000 },
    ],
    [
      'RateLimitError insufficient_quota',
      () =>
        new OpenAI.RateLimitError(
          429,
          { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' },
          undefined,
          headers(),
        ),
      { kind: 'rate_limit', code: 'RATE_LIMITED', transient: false, misconfiguration: true },
    ],
    [
      'AuthenticationError (rejected key)',
      () => new OpenAI.AuthenticationError(401, { message: 'Incorrect API key provided', code: 'invalid_api_key' }, undefined, headers()),
      { kind: 'auth', code: 'AUTH_EXPIRED', status: 401, transient: false, misconfiguration: true },
    ],
    [
      'PermissionDeniedError',
      () => new OpenAI.PermissionDeniedError(403, { message: 'Country not supported', code: 'unsupported_country_region_territory' }, undefined, headers()),
      { kind: 'forbidden', code: 'PERMISSION_DENIED', status: 403, transient: false, misconfiguration: true },
    ],
    [
      'NotFoundError (model name wrong)',
      () => new OpenAI.NotFoundError(404, { message: 'The model `gpt-9` does not exist', code: 'model_not_found' }, undefined, headers()),
      { kind: 'not_found', code: 'NOT_FOUND', status: 404, misconfiguration: true },
    ],
    [
      'BadRequestError (context too long)',
      () => new OpenAI.BadRequestError(400, { message: 'maximum context length', code: 'context_length_exceeded' }, undefined, headers()),
      { kind: 'invalid_input', code: 'INVALID_INPUT', transient: false, misconfiguration: false },
    ],
    [
      'InternalServerError',
      () => new OpenAI.InternalServerError(500, { message: 'server error', type: 'server_error' }, undefined, headers()),
      { kind: 'server', code: 'UNAVAILABLE', status: 500, transient: true, misconfiguration: false },
    ],
    [
      'InternalServerError 503 with retry-after',
      () => new OpenAI.InternalServerError(503, undefined, 'Service Unavailable', headers({ 'retry-after': '3' })),
      { kind: 'server', status: 503, transient: true, retryAfterMs: 3000 },
    ],
    [
      'APIConnectionError over fetch failed / ECONNRESET',
      () =>
        new OpenAI.APIConnectionError({ cause: new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) }) }),
      { kind: 'network', code: 'NETWORK_ERROR', status: null, transient: true, misconfiguration: false },
    ],
    [
      'APIConnectionError over an unknown base URL host',
      () => new OpenAI.APIConnectionError({ cause: unresolvableHost('api.openai.invalid') }),
      { kind: 'misconfigured', code: 'UNAVAILABLE', transient: false, misconfiguration: true },
    ],
    [
      'APIConnectionError with no cause',
      () => new OpenAI.APIConnectionError({ message: 'Connection error.' }),
      { kind: 'network', code: 'NETWORK_ERROR', transient: true, ambiguous: true },
    ],
    [
      'APIConnectionTimeoutError',
      () => new OpenAI.APIConnectionTimeoutError(),
      { kind: 'timeout', code: 'TIMEOUT', status: null, transient: true, misconfiguration: false },
    ],
    ['APIUserAbortError', () => new OpenAI.APIUserAbortError(), { kind: 'cancelled', code: 'CANCELLED', transient: false, misconfiguration: false }],
  ])('OpenAI SDK %s', (_label, make, expected) => {
    expect(classifyModelError(make(), at)).toMatchObject(expected);
  });

  it('an OpenAI 401 is a misconfiguration through classifyError too (the lead’s default call)', () => {
    const thrown = new OpenAI.AuthenticationError(401, { message: 'Incorrect API key provided' }, undefined, headers());
    expect(classifyError(thrown, at)).toMatchObject({ code: 'AUTH_EXPIRED', misconfiguration: true, status: 401, message: '401 Incorrect API key provided' });
  });

  /** The Anthropic SDK's error classes (Stainless-generated, like OpenAI's): `status`, `headers` (a `Headers`), `error` (the body), `requestID`. */
  class AnthropicAPIError extends Error {
    constructor(
      readonly status: number | undefined,
      readonly error: unknown,
      message: string,
      readonly headers: Headers | undefined,
    ) {
      super(message);
    }
  }
  class InternalServerError extends AnthropicAPIError {}
  class RateLimitError extends AnthropicAPIError {}

  it('Anthropic SDK: 529 overloaded is unavailable and transient', () => {
    const thrown = new InternalServerError(
      529,
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
      new Headers({ 'x-should-retry': 'true' }),
    );
    expect(pick(classifyModelError(thrown, at))).toEqual({
      kind: 'server',
      code: 'UNAVAILABLE',
      status: 529,
      transient: true,
      ambiguous: false,
      misconfiguration: false,
      retryAfterMs: undefined,
    });
  });

  it('Anthropic SDK: 429 with retry-after and its RFC 3339 reset headers', () => {
    const reset = new Date(NOW + 45_000).toISOString();
    const withRetryAfter = new RateLimitError(
      429,
      { type: 'error', error: { type: 'rate_limit_error', message: 'rate' } },
      '429',
      new Headers({ 'retry-after': '12', 'anthropic-ratelimit-requests-reset': reset }),
    );
    expect(classifyModelError(withRetryAfter, at)).toMatchObject({ kind: 'rate_limit', retryAfterMs: 12_000 });
    const resetOnly = new RateLimitError(
      429,
      { type: 'error', error: { type: 'rate_limit_error', message: 'rate' } },
      '429',
      new Headers({ 'anthropic-ratelimit-requests-reset': reset, 'anthropic-ratelimit-requests-remaining': '0' }),
    );
    expect(classifyModelError(resetOnly, at)).toMatchObject({ kind: 'rate_limit', retryAfterMs: 45_000 });
  });

  it('Anthropic: an error streamed after a 200 (no status, only the body type) is classified by its type', () => {
    const streamed = new AnthropicAPIError(undefined, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 'Overloaded', undefined);
    expect(classifyModelError(streamed, at)).toMatchObject({ kind: 'server', code: 'UNAVAILABLE', transient: true });
  });

  /** The Vercel AI SDK's `APICallError` (`@ai-sdk/provider`), by its documented shape. */
  class APICallError extends Error {
    readonly url = 'https://api.openai.com/v1/chat/completions';
    readonly requestBodyValues = {};
    readonly statusCode: number | undefined;
    readonly responseHeaders: Record<string, string> | undefined;
    readonly isRetryable: boolean;
    constructor(input: { message: string; statusCode?: number; responseHeaders?: Record<string, string>; isRetryable?: boolean; cause?: unknown }) {
      super(input.message, { cause: input.cause });
      this.name = 'AI_APICallError';
      this.statusCode = input.statusCode;
      this.responseHeaders = input.responseHeaders;
      const status = input.statusCode;
      this.isRetryable = input.isRetryable ?? (status != null && (status === 408 || status === 409 || status === 429 || status >= 500));
    }
  }
  class RetryError extends Error {
    readonly lastError: unknown;
    constructor(
      message: string,
      readonly reason: 'maxRetriesExceeded' | 'errorNotRetryable' | 'abort',
      readonly errors: unknown[],
    ) {
      super(message);
      this.name = 'AI_RetryError';
      this.lastError = errors[errors.length - 1];
    }
  }

  it('Vercel AI SDK APICallError: statusCode and responseHeaders (lower case, a plain record)', () => {
    const thrown = new APICallError({
      message: 'Too Many Requests',
      statusCode: 429,
      responseHeaders: { 'retry-after': '2', 'x-ratelimit-reset-requests': '6m0s' },
    });
    expect(pick(classifyModelError(thrown, at))).toEqual({
      kind: 'rate_limit',
      code: 'RATE_LIMITED',
      status: 429,
      transient: true,
      ambiguous: false,
      misconfiguration: false,
      retryAfterMs: 2000,
    });
    expect(classifyModelError(new APICallError({ message: 'Unauthorized', statusCode: 401, responseHeaders: {} }), at)).toMatchObject({
      code: 'AUTH_EXPIRED',
      misconfiguration: true,
    });
  });

  it('Vercel AI SDK APICallError without a status: the network cause decides, else isRetryable', () => {
    const refused = new APICallError({
      message: 'Cannot connect to API: fetch failed',
      isRetryable: true,
      cause: new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' }) }),
    });
    expect(classifyModelError(refused, at)).toMatchObject({ kind: 'network', code: 'NETWORK_ERROR', transient: true, misconfiguration: false });
    expect(classifyModelError(new APICallError({ message: 'Cannot connect to API', isRetryable: true }), at)).toMatchObject({
      code: 'NETWORK_ERROR',
      transient: true,
    });
    expect(classifyModelError(new APICallError({ message: 'odd failure', isRetryable: false }), at)).toMatchObject({ code: 'NETWORK_ERROR', transient: false });
  });

  it('Vercel AI SDK RetryError: classified by its lastError', () => {
    const errors = [
      new APICallError({ message: 'Service Unavailable', statusCode: 503, responseHeaders: {} }),
      new APICallError({ message: 'Too Many Requests', statusCode: 429, responseHeaders: { 'retry-after': '30' } }),
    ];
    const thrown = new RetryError('Failed after 3 attempts. Last error: Too Many Requests', 'maxRetriesExceeded', errors);
    expect(classifyModelError(thrown, at)).toMatchObject({
      kind: 'rate_limit',
      status: 429,
      retryAfterMs: 30_000,
      message: 'Failed after 3 attempts. Last error: Too Many Requests',
    });
  });

  it('Vercel AI SDK: a missing API key is a misconfiguration; an invalid response is invalid_response', () => {
    const missingKey = Object.assign(new Error('OpenAI API key is missing. Pass it using the apiKey parameter or the OPENAI_API_KEY environment variable.'), {
      name: 'AI_LoadAPIKeyError',
    });
    expect(classifyError(missingKey, at)).toMatchObject({ kind: 'auth', code: 'AUTH_EXPIRED', transient: false, misconfiguration: true });
    const invalid = Object.assign(new Error('Invalid response data'), { name: 'AI_InvalidResponseDataError' });
    expect(classifyModelError(invalid, at)).toMatchObject({ kind: 'invalid_response', transient: true, misconfiguration: false });
  });

  it('plain fetch: TypeError fetch failed with a cause code', () => {
    const reset = new TypeError('fetch failed', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });
    expect(classifyModelError(reset, at)).toEqual({
      kind: 'network',
      code: 'NETWORK_ERROR',
      status: null,
      transient: true,
      ambiguous: true,
      misconfiguration: false,
      message: 'fetch failed: UND_ERR_SOCKET: other side closed',
    });
    const connectTimeout = new TypeError('fetch failed', { cause: Object.assign(new Error('Connect Timeout Error'), { code: 'UND_ERR_CONNECT_TIMEOUT' }) });
    expect(classifyModelError(connectTimeout, at)).toMatchObject({ kind: 'timeout', code: 'TIMEOUT', transient: true, ambiguous: false });
  });

  it('a thrown fetch Response is classified by its status and headers', () => {
    const response = new Response('busy', { status: 503, statusText: 'Service Unavailable', headers: { 'Retry-After': '4' } });
    expect(classifyModelError(response, at)).toMatchObject({
      kind: 'server',
      status: 503,
      transient: true,
      retryAfterMs: 4000,
      message: 'HTTP 503 Service Unavailable',
    });
  });

  it('ModelResponseError (what model adapters throw for a non-completion) is invalid_response, transient', () => {
    const thrown = new ModelResponseError('the completion has no choices');
    expect(ModelResponseError.is(thrown)).toBe(true);
    expect(classifyModelError(thrown, at)).toEqual({
      code: 'TOOL_EXCEPTION',
      kind: 'invalid_response',
      status: null,
      transient: true,
      ambiguous: false,
      misconfiguration: false,
      message: 'the completion has no choices',
    });
    // recognised by name too (another copy of the package, or a hand-made one)
    expect(classifyModelError(Object.assign(new Error('x'), { name: 'ModelResponseError' }), at).kind).toBe('invalid_response');
  });

  it('a missing driver (ToolrunError MISSING_DEPENDENCY) is a misconfiguration', () => {
    expect(classifyError(new ToolrunError('MISSING_DEPENDENCY', 'npm install openai'), at)).toMatchObject({
      kind: 'misconfigured',
      misconfiguration: true,
      transient: false,
    });
    expect(classifyError(new ToolrunError('INVALID_OPTIONS', 'bad'), at)).toMatchObject({ kind: 'exception', misconfiguration: false });
  });

  it('TimeoutError and AbortError keep their meaning; an AbortError yields to a specific cause', () => {
    expect(classifyError(new DOMException('The operation timed out.', 'TimeoutError'), at)).toMatchObject({ kind: 'timeout', transient: true });
    expect(classifyError(new DOMException('This operation was aborted', 'AbortError'), at)).toMatchObject({ kind: 'cancelled', code: 'CANCELLED' });
    const abortedByReset = Object.assign(new DOMException('aborted', 'AbortError'), {
      cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
    });
    expect(classifyError(abortedByReset, at)).toMatchObject({ kind: 'network', transient: true });
  });
});

describe('never throws, whatever was thrown', () => {
  const throwingGetter = () => {
    throw new Error('getter exploded');
  };
  function hostileNullPrototype(): object {
    const value = Object.create(null) as object;
    for (const key of ['cause', 'status', 'statusCode', 'headers', 'message', 'name', 'code', 'errors', 'response', 'constructor', 'lastError']) {
      Object.defineProperty(value, key, { get: throwingGetter, enumerable: true });
    }
    return value;
  }
  function trapEverything(): object {
    const handler: ProxyHandler<object> = new Proxy(
      {},
      {
        get: () => () => {
          throw new Error('trap');
        },
      },
    );
    return new Proxy({}, handler);
  }
  function revoked(): object {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    return proxy;
  }

  const exotic: Array<[string, () => unknown]> = [
    ['a null-prototype object with throwing getters', hostileNullPrototype],
    ['an Error whose cause getter throws', () => Object.defineProperty(new Error('outer'), 'cause', { get: throwingGetter })],
    ['a Proxy throwing on every trap', trapEverything],
    ['a revoked Proxy', revoked],
    ['a Symbol', () => Symbol('thrown')],
    ['a BigInt', () => 10n ** 30n],
    ['undefined', () => undefined],
    ['null', () => null],
    ['a function with throwing properties', () => Object.defineProperty(() => undefined, 'status', { get: throwingGetter })],
    ['a 429 whose headers getter throws', () => Object.defineProperty({ status: 429 }, 'headers', { get: throwingGetter })],
    ['a 429 whose headers are a Proxy throwing on every trap', () => ({ status: 429, headers: trapEverything() })],
    ['a 429 whose headers are revoked', () => ({ status: 429, headers: revoked() })],
    ['a cause chain of Proxies', () => new Error('x', { cause: new Error('y', { cause: trapEverything() }) })],
    ['AggregateError with hostile members', () => new AggregateError([hostileNullPrototype(), revoked(), trapEverything(), Symbol('s')], 'many')],
    ['an errors array that is a throwing Proxy', () => Object.assign(new Error('x'), { errors: new Proxy([], { get: throwingGetter }) })],
    [
      'an infinite, fresh cause chain',
      () => {
        const make = (): object => Object.defineProperty({}, 'cause', { get: make, enumerable: true });
        return make();
      },
    ],
  ];

  it.each(exotic)('%s → a classification', (_label, make) => {
    const classified = classifyError(make(), at);
    expect(typeof classified.message).toBe('string');
    expect(Object.keys(FAILURE_CODES)).toContain(classified.code);
    expect(classifyModelError(make(), at).code).toBe(classified.code);
  });

  it('the 429 with unreadable headers is still a rate limit, only without a wait', () => {
    expect(pick(classifyError({ status: 429, headers: trapEverything() }, at))).toEqual({
      kind: 'rate_limit',
      code: 'RATE_LIMITED',
      status: 429,
      transient: true,
      ambiguous: false,
      misconfiguration: false,
      retryAfterMs: undefined,
    });
  });

  it('describes a symbol, a BigInt and a null-prototype object without throwing', () => {
    expect(classifyError(Symbol('thrown'), at).message).toBe('Symbol(thrown)');
    expect(classifyError(10n, at).message).toBe('10');
    expect(classifyError(Object.create(null), at).message).toBe('[an object that cannot be printed]');
  });

  /**
   * Error-shaped values of every kind, nested through `cause`, `errors` and `lastError`, with hostile
   * leaves. Generated as plain descriptors (fast-check itself cannot hold a revoked proxy) and built
   * inside the property.
   */
  const HOSTILE = [hostileNullPrototype, trapEverything, revoked, () => Symbol('s'), () => 1n];
  type Descriptor =
    | { hostile: number }
    | { plain: unknown }
    | {
        fields: Record<string, unknown>;
        headers?: { as: 'record' | 'map' | 'headers' | 'hostile'; values: Record<string, string> };
        cause?: Descriptor;
        lastError?: Descriptor;
        errors?: Descriptor[];
      };
  const headerValue = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.double().map(String),
    fc.bigInt().map(String),
    fc.integer().map(String),
    fc.constantFrom('6m0s', '1h2m3.5s', '-1', 'NaN', '1e400', '"p";r=0;t=9', 'Wed, 15 Jan 2025 12:00:30 GMT'),
  );
  const headerName = fc.constantFrom(
    'retry-after',
    'Retry-After-Ms',
    'x-ratelimit-reset',
    'x-ratelimit-reset-requests',
    'x-ratelimit-remaining',
    'RateLimit',
    'ratelimit-reset',
    'x-should-retry',
    'anthropic-ratelimit-tokens-reset',
  );
  const { descriptor } = fc.letrec<{ descriptor: Descriptor }>((tie) => ({
    descriptor: fc.oneof(
      { depthSize: 'small' },
      fc.record({ plain: fc.anything() }),
      fc.record({ hostile: fc.nat({ max: HOSTILE.length - 1 }) }),
      fc.record(
        {
          fields: fc.record(
            {
              status: fc.oneof(fc.integer({ min: -10, max: 1000 }), fc.anything()),
              statusCode: fc.integer({ min: 100, max: 599 }),
              code: fc.constantFrom('ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'insufficient_quota', 'EWHATEVER', 'CERT_HAS_EXPIRED'),
              name: fc.constantFrom('Error', 'AbortError', 'TimeoutError', 'AI_APICallError', 'APIConnectionError', 'AI_RetryError'),
              message: fc.oneof(fc.string(), fc.anything()),
              isRetryable: fc.boolean(),
            },
            { requiredKeys: [] },
          ),
          headers: fc.record({ as: fc.constantFrom('record', 'map', 'headers', 'hostile'), values: fc.dictionary(headerName, headerValue, { maxKeys: 4 }) }),
          cause: tie('descriptor'),
          lastError: tie('descriptor'),
          errors: fc.array(tie('descriptor'), { maxLength: 3 }),
        },
        { requiredKeys: ['fields'] },
      ),
    ),
  }));
  function build(description: Descriptor): unknown {
    if ('hostile' in description) return HOSTILE[description.hostile]!();
    if ('plain' in description) return description.plain;
    const error = Object.assign(new Error(typeof description.fields.message === 'string' ? description.fields.message : 'generated'), description.fields);
    if (description.headers) {
      const { as, values } = description.headers;
      const printable = Object.entries(values).map(([key, value]) => [key, value.replace(/[^\x20-\x7e]/g, '')] as [string, string]);
      (error as { headers?: unknown }).headers =
        as === 'record' ? values : as === 'map' ? new Map(Object.entries(values)) : as === 'headers' ? new Headers(printable) : trapEverything();
    }
    if (description.cause) (error as { cause?: unknown }).cause = build(description.cause);
    if (description.lastError) (error as { lastError?: unknown }).lastError = build(description.lastError);
    if (description.errors) (error as { errors?: unknown }).errors = description.errors.map(build);
    return error;
  }

  it('property: for any thrown value it returns a classification with sane fields', () => {
    fc.assert(
      fc.property(
        descriptor,
        fc.constantFrom('resource-from-arguments', 'fixed', 'url-from-arguments') as fc.Arbitrary<'resource-from-arguments' | 'fixed' | 'url-from-arguments'>,
        (description, target) => {
          const classified = classifyError(build(description), { ...at, target });
          expect(Object.keys(FAILURE_CODES)).toContain(classified.code);
          expect(typeof classified.kind).toBe('string');
          expect(typeof classified.message).toBe('string');
          expect(typeof classified.transient).toBe('boolean');
          expect(typeof classified.misconfiguration).toBe('boolean');
          expect(classified.status === null || (Number.isInteger(classified.status) && classified.status >= 100 && classified.status <= 599)).toBe(true);
          if (classified.retryAfterMs !== undefined) {
            expect(Number.isInteger(classified.retryAfterMs)).toBe(true);
            expect(classified.retryAfterMs).toBeGreaterThanOrEqual(0);
            expect(classified.retryAfterMs).toBeLessThanOrEqual(MAX_RETRY_AFTER_MS);
          }
          // with a URL from the arguments, only a ToolError can say "broken for everyone" (none is generated)
          if (target === 'url-from-arguments') expect(classified.misconfiguration).toBe(false);
        },
      ),
      { seed: 20_250_115, numRuns: 400 },
    );
  });
});
