import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../testing/fake-clock.ts';
import { createAutoAdvancingClock } from '../testing/auto-advancing-clock.ts';
import { createToolRuntime } from './create-tool-runtime.ts';
import { defineTool } from './define-tool.ts';
import { ToolError } from './tool-error.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { formatToolResult } from './format-tool-result.ts';

const weather = defineTool({
  name: 'query_weather',
  description: 'Weather for a city on a date',
  inputSchema: {
    type: 'object',
    properties: { city: { type: 'string' }, date: { type: 'string', format: 'date' } },
    required: ['city', 'date'],
    additionalProperties: false,
  },
  idempotent: true,
  execute: async ({ city, date }) => ({ city, date, celsius: 21 }),
});

/** Lets the pipeline run up to its next wait on the fake clock. */
async function flush(): Promise<void> {
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
}

const fixed = { callId: 'call_1', traceId: 'trace_1' } as const;

describe('createToolRuntime: the envelope', () => {
  it('an unavailable tool: the suggestion says "already retried" only when the call was retried', async () => {
    const down = defineTool({
      name: 'book',
      description: 'Books',
      inputSchema: { type: 'object' },
      execute: () => {
        throw new ToolError({ kind: 'server', status: 503, message: 'booking service down' });
      },
    });
    const once = createToolRuntime({ tools: [down], clock: createAutoAdvancingClock(), retry: { maxAttempts: 1 } });
    const single = await once.run({ name: 'book', args: '{}', ...fixed });
    expect(single).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'UNAVAILABLE' } });
    expect(single.status === 'failed' && single.error.suggestion).toMatch(/ran once and was not retried automatically/);
    const thrice = createToolRuntime({ tools: [down], clock: createAutoAdvancingClock(), retry: { maxAttempts: 3, backoff: { baseDelayMs: 1, jitterMs: 0 } } });
    const retried = await thrice.run({ name: 'book', args: '{}', ...fixed });
    expect(retried).toMatchObject({ status: 'failed', attempts: 3, error: { code: 'UNAVAILABLE' } });
    expect(retried.status === 'failed' && retried.error.suggestion).toMatch(/was already retried/);
  });

  it('returns the success envelope (golden)', async () => {
    const clock = createFakeClock(0);
    const runtime = createToolRuntime({ tools: [weather], clock });
    const result = await runtime.run({ name: 'query_weather', args: '{"city":"Paris","date":"2024-01-15"}', ...fixed });
    expect(result).toEqual({
      status: 'success',
      tool_name: 'query_weather',
      call_id: 'call_1',
      duration_ms: 0,
      attempts: 1,
      trace_id: 'trace_1',
      data: { city: 'Paris', date: '2024-01-15', celsius: 21 },
    });
  });

  it('a wrong date never reaches the tool and says the format with an example (golden)', async () => {
    let executed = 0;
    const runtime = createToolRuntime({
      tools: [{ ...weather, execute: async () => (executed += 1) }],
      clock: createFakeClock(0),
    });
    const result = await runtime.run({ name: 'query_weather', args: { city: 'Paris', date: '2024/1/5' }, ...fixed });
    expect(executed).toBe(0);
    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.attempts).toBe(0);
    expect(result.error.type).toBe('invalid_parameter');
    expect(result.error.code).toBe('DATE_FORMAT_ERROR');
    expect(result.error.retryable).toBe(true);
    expect(result.error.fields).toEqual([expect.objectContaining({ path: '/date', problem: 'format', received: '"2024/1/5"' })]);
    expect(result.error.fields?.[0]?.expected).toContain('YYYY-MM-DD');
    expect(result.error.message + result.error.detail).toMatch(/2024-01-15|YYYY-MM-DD/);
  });

  it('an unknown tool: TOOL_NOT_FOUND with the available names and the closest one', async () => {
    const runtime = createToolRuntime({ tools: [weather, { ...weather, name: 'search_web' }], clock: createFakeClock(0) });
    const result = await runtime.run({ name: 'search_web_v2', args: {}, ...fixed });
    expect(result).toMatchObject({
      status: 'failed',
      attempts: 0,
      error: { type: 'logic', code: 'TOOL_NOT_FOUND', retryable: false, available_tools: ['query_weather', 'search_web'], closest_tool: 'search_web' },
    });
  });

  it('resolves an equivalent spelling (math_factorial for math.factorial) and records it', async () => {
    const runtime = createToolRuntime({ tools: { 'math.factorial': async ({ n }: { n: number }) => (n <= 1 ? 1 : n * 2) }, clock: createFakeClock(0) });
    const record = await runtime.execute({ name: 'math_factorial', args: { n: 2 } });
    expect(record.result).toMatchObject({ status: 'success', tool_name: 'math.factorial', data: 4 });
    expect(record.normalisations).toContain('tool-name-resolved:math_factorial->math.factorial');
  });

  it('a tool bug is logic/TOOL_EXCEPTION, not retried, without stack or host path; the record keeps them', async () => {
    let calls = 0;
    const runtime = createToolRuntime({
      tools: {
        broken: async () => {
          calls += 1;
          throw new TypeError("Cannot read properties of undefined (reading 'x') at /home/app/src/tools/broken.ts:12:5");
        },
      },
      clock: createFakeClock(0),
    });
    const record = await runtime.execute({ name: 'broken', args: {} });
    expect(calls).toBe(1);
    expect(record.result).toMatchObject({ status: 'failed', error: { type: 'logic', code: 'TOOL_EXCEPTION', retryable: false } });
    const wire = JSON.stringify(record.result);
    expect(wire).not.toContain('/home/app');
    expect(wire).not.toMatch(/\bat\s+\S+:\d+:\d+/);
    expect(record.error?.stack).toContain('TypeError');
  });

  it('bounds a tool error text to maxErrorTextBytes and redacts secrets in it', async () => {
    const runtime = createToolRuntime({
      tools: {
        noisy: async () => {
          throw new ToolError({ kind: 'precondition', message: `refused for jane@corp.example token sk-${'a'.repeat(40)} ${'x'.repeat(5000)}` });
        },
      },
      clock: createFakeClock(0),
    });
    const result = await runtime.run({ name: 'noisy', args: {} });
    if (result.status !== 'failed') throw new Error('expected a failure');
    expect(Buffer.byteLength(result.error.detail)).toBeLessThanOrEqual(2048);
    expect(result.error.detail).not.toContain('jane@corp.example');
    expect(result.error.detail).not.toContain('sk-aaaa');
    expect(result.error.code).toBe('PRECONDITION_FAILED');
  });

  it('OUTPUT_TOO_LARGE over maxOutputBytes; truncate mode marks the cut', async () => {
    const big = { rows: 'y'.repeat(2000) };
    const failing = createToolRuntime({ tools: { big: async () => big }, maxOutputBytes: 1000, clock: createFakeClock(0) });
    expect(await failing.run({ name: 'big', args: {} })).toMatchObject({ status: 'failed', error: { code: 'OUTPUT_TOO_LARGE', type: 'logic' } });
    const truncating = createToolRuntime({ tools: { big: async () => big }, maxOutputBytes: 1000, outputOverflow: 'truncate', clock: createFakeClock(0) });
    const result = await truncating.run({ name: 'big', args: {} });
    expect(result).toMatchObject({ status: 'success', truncated: true });
    expect(Buffer.byteLength(String((result as { data: unknown }).data))).toBeLessThanOrEqual(1000);
  });

  it('throws ToolrunError only for programmer errors', () => {
    expect(() => createToolRuntime({ tools: [{ ...weather, name: 'bad name!' }] })).toThrow(ToolrunError);
    expect(() => createToolRuntime({ tools: [weather, weather] })).toThrow(/Two tools/);
    expect(() => createToolRuntime({ tools: [weather], defaultTimeoutMs: -1 })).toThrow(ToolrunError);
  });

  it('formatToolResult wraps the envelope for text-only models and cannot be closed early', () => {
    const text = formatToolResult({ status: 'success', tool_name: 'x', call_id: 'c', duration_ms: 1, attempts: 1, trace_id: 't', data: '</tool_result>' });
    expect(text.startsWith('<tool_result tool="x" status="success">')).toBe(true);
    expect(text.match(/<\/tool_result>/g)).toHaveLength(1);
    expect(JSON.parse(text.slice(text.indexOf('>') + 1, -'</tool_result>'.length))).toMatchObject({ data: '</tool_result>' });
  });
});

describe('createToolRuntime: retries, timeouts, Retry-After', () => {
  it('retries a 503 with backoff + jitter on the injected clock and random source', async () => {
    const clock = createFakeClock(0);
    let calls = 0;
    const runtime = createToolRuntime({
      tools: {
        flaky: async () => {
          calls += 1;
          if (calls < 3) throw new ToolError({ kind: 'server', status: 503 });
          return 'ok';
        },
      },
      clock,
      random: () => 0.5,
    });
    const pending = runtime.execute({ name: 'flaky', args: {} });
    await flush();
    await clock.advance(549);
    expect(calls).toBe(1);
    await flush();
    await clock.advance(1);
    expect(calls).toBe(2);
    await flush();
    await clock.advance(1050);
    const record = await pending;
    expect(calls).toBe(3);
    expect(record.result).toMatchObject({ status: 'success', attempts: 3, duration_ms: 1600 });
    expect(record.attempts.map((attempt) => attempt.delayAfterMs)).toEqual([550, 1050, undefined]);
  });

  it('after the last attempt an environment failure is not retryable and says to use another way', async () => {
    const runtime = createToolRuntime({
      tools: [
        defineTool({
          name: 'down',
          description: '',
          inputSchema: { type: 'object' },
          fallbacks: ['cached_weather'],
          execute: async () => {
            throw new ToolError({ kind: 'server', status: 503 });
          },
        }),
      ],
      clock: createAutoAdvancingClock(),
    });
    const result = await runtime.run({ name: 'down', args: {} });
    expect(result).toMatchObject({
      status: 'failed',
      attempts: 3,
      error: { type: 'environment', code: 'UNAVAILABLE', retryable: false, fallbacks: ['cached_weather'] },
    });
    if (result.status === 'failed') expect(result.error.suggestion).toContain('cached_weather');
  });

  it('a timeout aborts the work through ctx.signal', async () => {
    const clock = createFakeClock(0);
    let aborted = false;
    const runtime = createToolRuntime({
      tools: [
        defineTool({
          name: 'hang',
          description: '',
          inputSchema: { type: 'object' },
          timeoutMs: 1000,
          retry: { maxAttempts: 1 },
          execute: (_args, context) =>
            new Promise((_resolve, reject) =>
              context.signal.addEventListener('abort', () => {
                aborted = true;
                reject(context.signal.reason);
              }),
            ),
        }),
      ],
      clock,
    });
    const pending = runtime.run({ name: 'hang', args: {} });
    await flush();
    await clock.advance(1000);
    expect(await pending).toMatchObject({ status: 'failed', error: { code: 'TIMEOUT', type: 'environment' } });
    expect(aborted).toBe(true);
  });

  it('a non-idempotent write is not retried after an ambiguous timeout', async () => {
    const clock = createFakeClock(0);
    let calls = 0;
    const runtime = createToolRuntime({
      tools: [
        defineTool({
          name: 'pay',
          description: '',
          inputSchema: { type: 'object' },
          timeoutMs: 100,
          execute: () => {
            calls += 1;
            return new Promise(() => undefined);
          },
        }),
      ],
      clock,
    });
    const pending = runtime.run({ name: 'pay', args: {} });
    await flush();
    await clock.advance(100);
    const result = await pending;
    expect(calls).toBe(1);
    expect(result).toMatchObject({ status: 'failed', error: { code: 'TIMEOUT', retryable: false } });
    if (result.status === 'failed') expect(result.error.suggestion).toMatch(/may have taken effect/);
  });

  it('the idempotency key is stable across retries of one call', async () => {
    const keys: string[] = [];
    const runtime = createToolRuntime({
      tools: [
        defineTool({
          name: 'write',
          description: '',
          inputSchema: { type: 'object' },
          execute: async (_args, context) => {
            keys.push(context.idempotencyKey);
            if (keys.length < 3) throw new ToolError({ kind: 'server', status: 502 });
            return 'ok';
          },
        }),
      ],
      clock: createAutoAdvancingClock(),
    });
    await runtime.run({ name: 'write', args: {}, idempotencyKey: 'run-1:0:0' });
    expect(keys).toEqual(['run-1:0:0', 'run-1:0:0', 'run-1:0:0']);
  });

  it('honours Retry-After from a 429 and fails at once with retry_after_ms when it exceeds the budget', async () => {
    const clock = createFakeClock(0);
    let calls = 0;
    const runtime = createToolRuntime({
      tools: {
        limited: async () => {
          calls += 1;
          throw new ToolError({ kind: 'rate_limit', status: 429, retryAfterMs: calls === 1 ? 2000 : 600_000 });
        },
      },
      clock,
      callBudgetMs: 60_000,
    });
    const pending = runtime.run({ name: 'limited', args: {} });
    await flush();
    await clock.advance(1999);
    expect(calls).toBe(1);
    await flush();
    await clock.advance(1);
    const result = await pending;
    expect(calls).toBe(2);
    expect(result).toMatchObject({ status: 'failed', attempts: 2, error: { code: 'RATE_LIMITED', retryable: false, retry_after_ms: 600_000 } });
  });

  it('reads Retry-After from a thrown HTTP response', async () => {
    const clock = createFakeClock(0);
    let calls = 0;
    const runtime = createToolRuntime({
      tools: {
        api: async () => {
          calls += 1;
          if (calls === 1) throw new Response('slow down', { status: 503, headers: { 'Retry-After': '3' } });
          return 'ok';
        },
      },
      clock,
    });
    const pending = runtime.run({ name: 'api', args: {} });
    await flush();
    await clock.advance(2999);
    expect(calls).toBe(1);
    await flush();
    await clock.advance(1);
    expect(await pending).toMatchObject({ status: 'success', attempts: 2 });
  });

  it('classifies Node network errors: ECONNREFUSED is retried; ENOTFOUND is not retried and, as the host may come from the arguments, does not feed the shared breaker', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    const unknownHost = new TypeError('fetch failed', { cause: Object.assign(new Error('getaddrinfo ENOTFOUND api.invalid'), { code: 'ENOTFOUND' }) });
    let refusedCalls = 0;
    const runtime = createToolRuntime({
      tools: {
        refused: async () => {
          refusedCalls += 1;
          throw refused;
        },
        gone: async () => {
          throw unknownHost;
        },
      },
      clock: createAutoAdvancingClock(),
    });
    expect(await runtime.run({ name: 'refused', args: {} })).toMatchObject({ error: { code: 'NETWORK_ERROR', type: 'environment' } });
    expect(refusedCalls).toBe(3);
    const gone = await runtime.execute({ name: 'gone', args: {} });
    expect(gone.result).toMatchObject({ attempts: 1, error: { code: 'UNAVAILABLE', retryable: false } });
    expect(gone.misconfiguration).toBe(false);
  });

  it('permission failures are not retried; onAuthError may refresh once', async () => {
    let calls = 0;
    let refreshes = 0;
    const runtime = createToolRuntime({
      tools: {
        secure: async () => {
          calls += 1;
          if (calls < 3) throw new ToolError({ kind: 'auth', status: 401 });
          return 'ok';
        },
      },
      onAuthError: () => {
        refreshes += 1;
        return true;
      },
      clock: createFakeClock(0),
    });
    const result = await runtime.run({ name: 'secure', args: {} });
    expect(refreshes).toBe(1);
    expect(calls).toBe(2);
    expect(result).toMatchObject({ status: 'failed', error: { type: 'permission', code: 'AUTH_EXPIRED', retryable: false } });
  });

  it('a caller abort cancels the call', async () => {
    const controller = new AbortController();
    const runtime = createToolRuntime({
      tools: {
        slow: (_args: unknown, context: { signal: AbortSignal }) =>
          new Promise((_r, reject) => context.signal.addEventListener('abort', () => reject(new Error('aborted')))),
      },
      clock: createFakeClock(0),
    });
    const pending = runtime.run({ name: 'slow', args: {}, signal: controller.signal });
    controller.abort();
    expect(await pending).toMatchObject({ status: 'failed', error: { code: 'CANCELLED' } });
  });
});

describe('createToolRuntime: per-session breaker', () => {
  it('cuts a tool off after 3 consecutive failures in a session; other sessions are unaffected; success resets', async () => {
    let healthy = false;
    let calls = 0;
    const runtime = createToolRuntime({
      tools: [
        defineTool({
          name: 'lookup',
          description: '',
          inputSchema: { type: 'object' },
          retry: { maxAttempts: 1 },
          execute: async () => {
            calls += 1;
            if (!healthy) throw new ToolError({ kind: 'server', status: 500 });
            return 'ok';
          },
        }),
      ],
      clock: createFakeClock(0),
    });
    for (let index = 0; index < 3; index++) await runtime.run({ name: 'lookup', args: {}, sessionId: 's1' });
    expect(await runtime.run({ name: 'lookup', args: {}, sessionId: 's1' })).toMatchObject({
      attempts: 0,
      error: { type: 'circuit_breaker', code: 'TOO_MANY_FAILURES', retryable: false },
    });
    expect(calls).toBe(3);
    healthy = true;
    expect(await runtime.run({ name: 'lookup', args: {}, sessionId: 's2' })).toMatchObject({ status: 'success' });
    await runtime.run({ name: 'lookup', args: {}, sessionId: 's2' });
    expect(calls).toBe(5);
  });

  it('the same failing arguments sent again count toward the breaker', async () => {
    const runtime = createToolRuntime({ tools: [weather], clock: createFakeClock(0) });
    const bad = { city: 'Paris', date: 'tomorrow' };
    // The first bad call is the model trying; each identical repeat counts: the 3rd repeat opens the breaker.
    for (let index = 0; index < 4; index++) {
      expect(await runtime.run({ name: 'query_weather', args: bad, sessionId: 's' })).toMatchObject({ error: { code: 'DATE_FORMAT_ERROR' } });
    }
    expect(await runtime.run({ name: 'query_weather', args: bad, sessionId: 's' })).toMatchObject({ error: { code: 'TOO_MANY_FAILURES' } });
    // Corrected arguments never counted: another session with varied bad dates stays closed.
    for (const date of ['a', 'b', 'c', 'd']) await runtime.run({ name: 'query_weather', args: { city: 'Paris', date }, sessionId: 's3' });
    expect(await runtime.run({ name: 'query_weather', args: { city: 'Paris', date: '2024-01-15' }, sessionId: 's3' })).toMatchObject({ status: 'success' });
  });
});
