/**
 * The runtime's own robustness: bounded failure envelopes, results that are not JSON, thrown
 * values that cannot be read, durations timers cannot hold, the call limit, and breaker
 * bookkeeping for calls that never reach the tool. Each test uses the exact hostile input.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSharedBreaker } from '../policies/shared-breaker.ts';
import { createMemoryBreakerStateStore } from '../stores/memory/memory-breaker-state-store.ts';
import { createAutoAdvancingClock } from '../testing/auto-advancing-clock.ts';
import { createFakeClock } from '../testing/fake-clock.ts';
import { DEFAULT_MAX_ENVELOPE_BYTES } from './bound-envelope.ts';
import { createToolRuntime } from './create-tool-runtime.ts';
import { defineTool, MAX_TIMER_MS } from './define-tool.ts';
import { formatToolResult } from './format-tool-result.ts';
import type { ToolResult } from '../ground/tool-result.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';

const encoder = new TextEncoder();
const bytesOf = (value: unknown): number => encoder.encode(JSON.stringify(value)).length;
const fixed = { callId: 'call_1', traceId: 'trace_1' } as const;

function failed(result: ToolResult) {
  expect(result.status).toBe('failed');
  if (result.status !== 'failed') throw new Error('expected a failure');
  return result;
}

const search = defineTool({
  name: 'search_web',
  description: 'Searches the web',
  inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'], additionalProperties: false },
  execute: async ({ query }) => ({ hits: [query] }),
});

describe('failure envelopes are bounded', () => {
  it('a 1 MB hallucinated tool name: the envelope stays under 16 KB and echoes at most 256 bytes of the name', async () => {
    const runtime = createToolRuntime({ tools: [search], clock: createFakeClock(0) });
    const name = `search_${'x'.repeat(1_000_000)}`;
    const result = failed(await runtime.run({ name, args: {}, ...fixed }));
    expect(result.error.code).toBe('TOOL_NOT_FOUND');
    expect(bytesOf(result)).toBeLessThanOrEqual(DEFAULT_MAX_ENVELOPE_BYTES);
    expect(encoder.encode(result.tool_name).length).toBeLessThanOrEqual(256);
    expect(result.tool_name.endsWith('… [truncated]')).toBe(true);
    expect(encoder.encode(result.error.message).length).toBeLessThanOrEqual(512);
    expect(result.error.available_tools).toEqual(['search_web']);
  });

  it('a 1 MB unknown property key: UNKNOWN_PARAMETER with a bounded path, under 16 KB', async () => {
    const runtime = createToolRuntime({ tools: [search], clock: createFakeClock(0) });
    const key = 'k'.repeat(1_000_000);
    const result = failed(await runtime.run({ name: 'search_web', args: JSON.stringify({ query: 'x', [key]: 1 }), ...fixed }));
    expect(result.error.code).toBe('UNKNOWN_PARAMETER');
    expect(bytesOf(result)).toBeLessThanOrEqual(DEFAULT_MAX_ENVELOPE_BYTES);
    expect(result.error.fields).toHaveLength(1);
    expect(encoder.encode(result.error.fields![0]!.path).length).toBeLessThanOrEqual(256);
    expect(result.error.fields![0]!.path.startsWith('/kkkk')).toBe(true);
  });

  it('5,000 wrong array items: 20 fields, omitted_fields 4,980 and "and 4980 more" for the model, under 16 KB', async () => {
    const tool = defineTool({
      name: 'tag',
      description: 'Tags items',
      inputSchema: { type: 'object', properties: { items: { type: 'array', items: { type: 'integer' } } }, required: ['items'] },
      execute: async () => 'ok',
    });
    const runtime = createToolRuntime({ tools: [tool], clock: createFakeClock(0) });
    const result = failed(await runtime.run({ name: 'tag', args: { items: Array.from({ length: 5000 }, (_, index) => `item-${index}`) }, ...fixed }));
    expect(result.error.code).toBe('INVALID_TYPE');
    expect(result.error.fields).toHaveLength(20);
    expect(result.error.fields![19]!.path).toBe('/items/19');
    expect(result.error.omitted_fields).toBe(4980);
    expect(result.error.message).toContain('5000 problems');
    expect(result.error.detail).toContain('(and 4980 more problems not listed in fields)');
    expect(bytesOf(result)).toBeLessThanOrEqual(DEFAULT_MAX_ENVELOPE_BYTES);
  });

  it('anyOf failures on 3,000 items are capped like any field list', async () => {
    const tool = defineTool({
      name: 'mixed',
      description: 'Mixed values',
      inputSchema: {
        type: 'object',
        properties: { values: { type: 'array', items: { anyOf: [{ type: 'integer' }, { type: 'string', format: 'date' }, { type: 'null' }] } } },
      },
      execute: async () => 'ok',
    });
    const runtime = createToolRuntime({ tools: [tool], clock: createFakeClock(0) });
    const result = failed(await runtime.run({ name: 'mixed', args: { values: Array.from({ length: 3000 }, () => true) }, ...fixed }));
    expect(result.error.fields).toHaveLength(20);
    expect(result.error.fields![0]).toMatchObject({ path: '/values/0', problem: 'alternatives' });
    expect(result.error.omitted_fields).toBe(2980);
    expect(bytesOf(result)).toBeLessThanOrEqual(DEFAULT_MAX_ENVELOPE_BYTES);
  });

  it('available_tools lists at most 50 of 200 tools; the detail counts the others', async () => {
    const tools = Array.from({ length: 200 }, (_, index) =>
      defineTool({ name: `tool_${String(index).padStart(3, '0')}`, description: '', inputSchema: { type: 'object' }, execute: async () => index }),
    );
    const runtime = createToolRuntime({ tools, clock: createFakeClock(0) });
    const result = failed(await runtime.run({ name: 'unknown_tool', args: {}, ...fixed }));
    expect(result.error.available_tools).toHaveLength(50);
    expect(result.error.detail).toContain('… (150 more)');
    expect(bytesOf(result)).toBeLessThanOrEqual(DEFAULT_MAX_ENVELOPE_BYTES);
  });

  it('a custom validator returning 10,000 fields of 10 KB texts each: bounded by maxEnvelopeBytes (4,096 here)', async () => {
    const big = 'v'.repeat(10_000);
    const runtime = createToolRuntime({
      tools: [defineTool({ name: 'custom', description: '', inputSchema: { type: 'object' }, execute: async () => 'ok' })],
      clock: createFakeClock(0),
      maxEnvelopeBytes: 4096,
      validator: {
        compile: (schema) => ({
          jsonSchema: schema as Record<string, unknown>,
          validate: () => ({
            ok: false,
            code: 'SCHEMA_VALIDATION_FAILED',
            message: big,
            detail: big,
            suggestion: big,
            fields: Array.from({ length: 10_000 }, (_, index) => ({ path: `/${big}${index}`, problem: big, expected: big, received: big, message: big })),
          }),
        }),
      },
    });
    const result = failed(await runtime.run({ name: 'custom', args: {}, ...fixed }));
    expect(bytesOf(result)).toBeLessThanOrEqual(4096);
    expect(result.error.omitted_fields).toBeGreaterThanOrEqual(10_000 - 20);
  });

  it('a tool error of 1 MB of control characters (6 bytes each as JSON) still fits the bound', async () => {
    const runtime = createToolRuntime({
      tools: {
        noisy: async () => {
          throw new Error('\u0001'.repeat(1_000_000));
        },
      },
      clock: createFakeClock(0),
    });
    const result = failed(await runtime.run({ name: 'noisy', args: {}, ...fixed }));
    expect(result.error.code).toBe('TOOL_EXCEPTION');
    expect(bytesOf(result)).toBeLessThanOrEqual(DEFAULT_MAX_ENVELOPE_BYTES);
  });

  it('a 1 MB call id and trace id are cut to 256 bytes', async () => {
    const runtime = createToolRuntime({ tools: [search], clock: createFakeClock(0) });
    const result = await runtime.run({ name: 'search_web', args: { query: 'q' }, callId: 'c'.repeat(1_000_000), traceId: 't'.repeat(1_000_000) });
    expect(result.status).toBe('success');
    expect(encoder.encode(result.call_id).length).toBeLessThanOrEqual(256);
    expect(encoder.encode(result.trace_id).length).toBeLessThanOrEqual(256);
  });

  it('refuses maxEnvelopeBytes below 2,048 and maxFieldErrors below 1 at creation', () => {
    expect(() => createToolRuntime({ tools: [search], maxEnvelopeBytes: 1000 })).toThrow(/maxEnvelopeBytes must be an integer ≥ 2048/);
    expect(() => createToolRuntime({ tools: [search], maxFieldErrors: 0 })).toThrow(/maxFieldErrors must be an integer ≥ 1/);
    expect(() => createToolRuntime({ tools: [search], maxInFlightCalls: 0 })).toThrow(/maxInFlightCalls must be an integer ≥ 1/);
  });
});

describe('success data is a copy of what the tool returned, serialised once', () => {
  it('a tool that grows its returned object after returning changes nothing in the envelope', async () => {
    let leaked: { items: string[] } | undefined;
    const runtime = createToolRuntime({
      tools: {
        leaky: async () => {
          leaked = { items: ['a'] };
          return leaked;
        },
      },
      clock: createFakeClock(0),
      maxOutputBytes: 1024,
    });
    const result = await runtime.run({ name: 'leaky', args: {}, ...fixed });
    for (let index = 0; index < 10_000; index++) leaked!.items.push('x'.repeat(100));
    expect(result).toMatchObject({ status: 'success', data: { items: ['a'] } });
    expect(bytesOf(result)).toBeLessThan(1024);
  });

  it('NaN and undefined become null, as in JSON', async () => {
    const runtime = createToolRuntime({ tools: { nan: async () => Number.NaN, nothing: async () => undefined }, clock: createFakeClock(0) });
    expect(await runtime.run({ name: 'nan', args: {} })).toMatchObject({ status: 'success', data: null });
    expect(await runtime.run({ name: 'nothing', args: {} })).toMatchObject({ status: 'success', data: null });
  });
});

describe('results that are not JSON are failures', () => {
  const circular: Record<string, unknown> = { a: 1 };
  circular.self = circular;
  const cases: Array<[string, () => unknown]> = [
    ['a BigInt', () => 10n],
    ['a nested BigInt', () => ({ total: 10n })],
    ['a circular object', () => circular],
    ['a function', () => () => 1],
    ['a symbol', () => Symbol('s')],
    [
      'a getter that throws',
      () => ({
        get value() {
          throw new Error('no');
        },
      }),
    ],
    ['an object whose toJSON returns undefined', () => ({ toJSON: () => undefined })],
  ];
  for (const [what, make] of cases) {
    it(`${what} → TOOL_EXCEPTION "returned a value that is not JSON", never success; formatToolResult does not throw`, async () => {
      const runtime = createToolRuntime({ tools: { odd: async () => make() }, clock: createFakeClock(0), sessionBreaker: { failureThreshold: 2 } });
      const result = failed(await runtime.run({ name: 'odd', args: {}, ...fixed }));
      expect(result.error).toMatchObject({ code: 'TOOL_EXCEPTION', type: 'logic', retryable: false });
      expect(result.error.message).toBe('odd returned a value that is not JSON');
      expect(() => JSON.stringify(result)).not.toThrow();
      expect(formatToolResult(result)).toContain('status="failed"');
      // A tool bug: counted by the session breaker like any other.
      await runtime.run({ name: 'odd', args: {} });
      expect(failed(await runtime.run({ name: 'odd', args: {} })).error.code).toBe('TOO_MANY_FAILURES');
    });
  }

  it('a Proxy that throws on every trap, or a revoked one, is a TOOL_EXCEPTION too (reading its `then` already throws)', async () => {
    const makers = [
      () =>
        new Proxy(
          {},
          {
            get: () => {
              throw new Error('trap');
            },
            ownKeys: () => {
              throw new Error('trap');
            },
            getOwnPropertyDescriptor: () => {
              throw new Error('trap');
            },
          },
        ),
      () => {
        const { proxy, revoke } = Proxy.revocable({}, {});
        revoke();
        return proxy;
      },
      // Traps that let `then` through but refuse the serialisation.
      () =>
        new Proxy(
          {},
          {
            get: (_target, key) => (key === 'then' ? undefined : 1),
            ownKeys: () => {
              throw new Error('trap');
            },
          },
        ),
    ];
    for (const make of makers) {
      const runtime = createToolRuntime({ tools: { odd: async () => make() }, clock: createFakeClock(0) });
      const result = failed(await runtime.run({ name: 'odd', args: {}, ...fixed }));
      expect(result.error.code).toBe('TOOL_EXCEPTION');
      expect(formatToolResult(result)).toContain('status="failed"');
    }
  });

  it('formatToolResult never throws, even on hand-built envelopes JSON cannot hold', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const base = { tool_name: 'x', call_id: 'c', duration_ms: 1, attempts: 1, trace_id: 't' };
    for (const data of [
      10n,
      { n: 10n },
      circular,
      proxy,
      new Proxy(
        {},
        {
          ownKeys: () => {
            throw new Error('x');
          },
        },
      ),
    ]) {
      const text = formatToolResult({ status: 'success', ...base, data } as ToolResult);
      expect(text.startsWith('<tool_result tool="x" status="success">')).toBe(true);
    }
    expect(formatToolResult(proxy as unknown as ToolResult)).toContain('status="failed"');
    expect(formatToolResult(undefined as unknown as ToolResult)).toContain('<tool_result tool=""');
  });
});

/**
 * Makers of values a tool may throw that resist being read. Thunks, not the values: fast-check
 * itself probes generated values (`in`), which a revoked or throwing Proxy would not survive.
 */
function weirdThrown(): fc.Arbitrary<{ label: string; make: () => unknown }> {
  const makers: Array<[string, () => unknown]> = [
    [
      'null-prototype object whose cause getter throws',
      () => {
        const value = Object.create(null) as Record<string, unknown>;
        Object.defineProperty(value, 'cause', {
          get: () => {
            throw new Error('cause getter');
          },
        });
        return value;
      },
    ],
    [
      'Proxy throwing on every trap',
      () =>
        new Proxy(
          {},
          Object.fromEntries(
            ['get', 'has', 'ownKeys', 'getPrototypeOf', 'getOwnPropertyDescriptor', 'apply', 'construct', 'defineProperty', 'set'].map((trap) => [
              trap,
              () => {
                throw new Error(trap);
              },
            ]),
          ),
        ),
    ],
    [
      'revoked Proxy of an Error',
      () => {
        const { proxy, revoke } = Proxy.revocable(new Error('x'), {});
        revoke();
        return proxy;
      },
    ],
    [
      'Error whose message, name, stack and cause getters throw',
      () => {
        const error = new Error('boom');
        // `stack` first: redefining it formats the stack, which reads `name` and `message`.
        for (const key of ['stack', 'message', 'name', 'cause'])
          Object.defineProperty(error, key, {
            get: () => {
              throw new Error(key);
            },
          });
        return error;
      },
    ],
    [
      'object whose toString and toPrimitive throw',
      () => ({
        toString: () => {
          throw new Error('toString');
        },
        [Symbol.toPrimitive]: () => {
          throw new Error('toPrimitive');
        },
      }),
    ],
    [
      'Error that is its own cause',
      () => {
        const error = new Error('loop') as Error & { cause?: unknown };
        error.cause = error;
        return error;
      },
    ],
    ['a Symbol', () => Symbol('thrown')],
    ['undefined', () => undefined],
    ['a BigInt', () => 10n],
  ];
  const oneGetter = fc
    .constantFrom('stack', 'message', 'name', 'cause', 'code', 'status', 'statusCode', 'headers', 'response', 'errors', 'lastError')
    .map((key) => ({
      label: `Error whose ${key} getter throws`,
      make: () => {
        const error = new Error('boom');
        void error.stack;
        Object.defineProperty(error, key, {
          get: () => {
            throw new Error(`${key} getter`);
          },
        });
        return error;
      },
    }));
  return fc.oneof(
    fc.constantFrom(...makers).map(([label, make]) => ({ label, make })),
    oneGetter,
    fc.anything().map((value) => ({ label: 'fc.anything()', make: () => value })),
  );
}

describe('exotic thrown values never make run or execute reject', () => {
  it('whatever is thrown (sync or as a rejection), the call ends with a JSON-serialisable failure envelope', async () => {
    await fc.assert(
      fc.asyncProperty(weirdThrown(), fc.boolean(), async ({ make }, synchronously) => {
        const thrown = make();
        const runtime = createToolRuntime({
          tools: {
            weird: synchronously
              ? () => {
                  throw thrown;
                }
              : () => Promise.reject(thrown),
          },
          clock: createAutoAdvancingClock(),
          onCallEnd: () => undefined,
        });
        const record = await runtime.execute({ name: 'weird', args: {} });
        expect(record.result.status).toBe('failed');
        expect(() => JSON.stringify(record.result)).not.toThrow();
        expect(bytesOf(record.result)).toBeLessThanOrEqual(DEFAULT_MAX_ENVELOPE_BYTES);
        expect(formatToolResult(record.result)).toContain('status="failed"');
        const result = await runtime.run({ name: 'weird', args: {} });
        expect(result.status).toBe('failed');
      }),
      { numRuns: 300 },
    );
  });

  it('a null-prototype object whose cause getter throws: TOOL_EXCEPTION with a readable record', async () => {
    const thrown = Object.create(null) as object;
    Object.defineProperty(thrown, 'cause', {
      get: () => {
        throw new Error('cause getter');
      },
    });
    const runtime = createToolRuntime({
      tools: {
        weird: async () => {
          throw thrown;
        },
      },
      clock: createFakeClock(0),
    });
    const record = await runtime.execute({ name: 'weird', args: {} });
    expect(record.result).toMatchObject({ status: 'failed', error: { code: 'TOOL_EXCEPTION' } });
    expect(record.error).toMatchObject({ kind: 'exception', causes: [] });
  });

  it('garbage input (null, a name that is a symbol or a revoked proxy) is a failure envelope too', async () => {
    const runtime = createToolRuntime({ tools: [search], clock: createFakeClock(0) });
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    for (const input of [null, undefined, { name: Symbol('x') }, { name: proxy }, { name: 'search_web', args: proxy }]) {
      const result = await runtime.run(input as never);
      expect(result.status).toBe('failed');
    }
  });
});

describe('durations a timer cannot hold are refused at creation', () => {
  const tooLong = MAX_TIMER_MS + 1;

  it('a tool timeoutMs above 2^31 − 1 ms: INVALID_DEFINITION (2^31 − 1 is accepted)', () => {
    const make = (timeoutMs: number) => defineTool({ name: 'slow', description: '', inputSchema: { type: 'object' }, timeoutMs, execute: async () => 1 });
    expect(() => make(tooLong)).toThrow(
      expect.objectContaining({ code: 'INVALID_DEFINITION', message: expect.stringContaining('timeoutMs must be at most 2147483647 ms') }),
    );
    expect(() => make(MAX_TIMER_MS)).not.toThrow();
    // A definition passed without defineTool is checked by the registry the same way.
    expect(() =>
      createToolRuntime({ tools: [{ name: 'slow', description: '', inputSchema: { type: 'object' }, timeoutMs: tooLong, execute: async () => 1 }] }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_DEFINITION' }));
  });

  it('defaultTimeoutMs, callBudgetMs and retry waits above it: INVALID_OPTIONS; a tool retry wait: INVALID_DEFINITION', () => {
    const code = (make: () => unknown): string | undefined => {
      try {
        make();
      } catch (error) {
        return ToolrunError.is(error) ? error.code : 'not a ToolrunError';
      }
      return undefined;
    };
    expect(code(() => createToolRuntime({ tools: [search], defaultTimeoutMs: tooLong }))).toBe('INVALID_OPTIONS');
    expect(code(() => createToolRuntime({ tools: [search], callBudgetMs: tooLong }))).toBe('INVALID_OPTIONS');
    expect(code(() => createToolRuntime({ tools: [search], callBudgetMs: 3e9 }))).toBe('INVALID_OPTIONS');
    expect(code(() => createToolRuntime({ tools: [search], retry: { backoff: { maxDelayMs: tooLong } } }))).toBe('INVALID_OPTIONS');
    expect(code(() => createToolRuntime({ tools: [search], retry: { minDelayMs: tooLong } }))).toBe('INVALID_OPTIONS');
    expect(code(() => createToolRuntime({ tools: [{ ...search, retry: { backoff: { baseDelayMs: tooLong } } }] }))).toBe('INVALID_DEFINITION');
    expect(code(() => createToolRuntime({ tools: [search], defaultTimeoutMs: MAX_TIMER_MS, callBudgetMs: MAX_TIMER_MS }))).toBeUndefined();
  });
});

describe('integers beyond 2^53 in the argument text', () => {
  it('{"id": 12345678901234567890} fails INVALID_TYPE at /id asking for a string; the tool never sees a rounded id', async () => {
    const seen: unknown[] = [];
    const runtime = createToolRuntime({
      tools: [
        defineTool({ name: 'get_order', description: '', inputSchema: { type: 'object', properties: { id: {} } }, execute: async (args) => seen.push(args) }),
      ],
      clock: createFakeClock(0),
    });
    const result = failed(await runtime.run({ name: 'get_order', args: '{"id": 12345678901234567890}', ...fixed }));
    expect(result.attempts).toBe(0);
    expect(seen).toEqual([]);
    expect(result.error).toMatchObject({
      type: 'invalid_parameter',
      code: 'INVALID_TYPE',
      retryable: true,
      fields: [{ path: '/id', received: '12345678901234567890' }],
    });
    expect(result.error.suggestion).toContain('as a string');
    expect(await runtime.run({ name: 'get_order', args: '{"id": "12345678901234567890"}' })).toMatchObject({ status: 'success' });
  });
});

describe('the call limit', () => {
  it('with maxInFlightCalls 3, the fourth concurrent call fails at once with CALL_LIMIT_EXCEEDED and its tool never runs', async () => {
    const clock = createFakeClock(0);
    let started = 0;
    const runtime = createToolRuntime({
      tools: {
        slow: async () => {
          started += 1;
          await clock.sleep(1000);
          return 'done';
        },
      },
      clock,
      maxInFlightCalls: 3,
    });
    const calls = [1, 2, 3].map(() => runtime.run({ name: 'slow', args: {} }));
    const fourth = failed(await runtime.run({ name: 'slow', args: {} }));
    expect(fourth.error).toMatchObject({ code: 'CALL_LIMIT_EXCEEDED', type: 'logic', retryable: false });
    expect(fourth.attempts).toBe(0);
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(started).toBe(3);
    await clock.advance(1000);
    expect((await Promise.all(calls)).map((result) => result.status)).toEqual(['success', 'success', 'success']);
    // The limit counts calls in flight: with them done, a new call runs.
    const again = runtime.run({ name: 'slow', args: {} });
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    await clock.advance(1000);
    expect(await again).toMatchObject({ status: 'success' });
  });
});

describe('breakers, runtime side', () => {
  async function openBreaker() {
    const clock = createFakeClock(0);
    const store = createMemoryBreakerStateStore();
    const sharedBreaker = createSharedBreaker({ store, clock, options: { failureThreshold: 2, halfOpenAfterMs: 10_000, probeTimeoutMs: 60_000 } });
    let healthy = false;
    let executions = 0;
    const runtime = createToolRuntime({
      tools: {
        crm: async () => {
          executions += 1;
          if (!healthy) throw Object.assign(new Error('invalid api key'), { status: 401 });
          return 'ok';
        },
      },
      clock,
      sharedBreaker,
      sessionBreaker: false,
    });
    await runtime.run({ name: 'crm', args: {} });
    await runtime.run({ name: 'crm', args: {} });
    expect(failed(await runtime.run({ name: 'crm', args: {} })).error.code).toBe('CIRCUIT_OPEN');
    await clock.advance(10_000);
    healthy = true;
    return { clock, runtime, sharedBreaker, executions: () => executions };
  }

  it('a probe granted to a call whose deadline had passed (BUDGET_EXHAUSTED) is released: the next call probes and closes the breaker', async () => {
    const { clock, runtime, sharedBreaker, executions } = await openBreaker();
    const before = executions();
    const late = failed(await runtime.run({ name: 'crm', args: {}, deadlineAt: clock.now() - 1 }));
    expect(late.error.code).toBe('BUDGET_EXHAUSTED');
    expect(executions()).toBe(before);
    expect((await sharedBreaker.state('crm'))?.probeStartedAt ?? null).toBeNull();
    expect(await runtime.run({ name: 'crm', args: {} })).toMatchObject({ status: 'success' });
    expect(executions()).toBe(before + 1);
    expect((await sharedBreaker.state('crm'))?.state).toBe('closed');
  });

  it('a probe granted to a call cancelled before it started is released', async () => {
    const { runtime, sharedBreaker } = await openBreaker();
    const controller = new AbortController();
    controller.abort();
    expect(failed(await runtime.run({ name: 'crm', args: {}, signal: controller.signal })).error.code).toBe('CANCELLED');
    expect((await sharedBreaker.state('crm'))?.probeStartedAt ?? null).toBeNull();
    expect(await runtime.run({ name: 'crm', args: {} })).toMatchObject({ status: 'success' });
  });

  it('a probe whose tool returned something that is not JSON is released (no outcome for the breaker)', async () => {
    const clock = createFakeClock(0);
    const sharedBreaker = createSharedBreaker({ store: createMemoryBreakerStateStore(), clock, options: { failureThreshold: 1, halfOpenAfterMs: 1000 } });
    let mode: 'broken' | 'bigint' | 'ok' = 'broken';
    const runtime = createToolRuntime({
      tools: {
        crm: async () => {
          if (mode === 'broken') throw Object.assign(new Error('invalid api key'), { status: 401 });
          return mode === 'bigint' ? 1n : 'ok';
        },
      },
      clock,
      sharedBreaker,
      sessionBreaker: false,
    });
    await runtime.run({ name: 'crm', args: {} });
    await clock.advance(1000);
    mode = 'bigint';
    expect(failed(await runtime.run({ name: 'crm', args: {} })).error.code).toBe('TOOL_EXCEPTION');
    expect((await sharedBreaker.state('crm'))?.probeStartedAt ?? null).toBeNull();
    mode = 'ok';
    expect(await runtime.run({ name: 'crm', args: {} })).toMatchObject({ status: 'success' });
  });

  it('a probe held when the pipeline itself fails (here: the clock throws) is released, and the call still resolves to a failure', async () => {
    const calls: string[] = [];
    const sharedBreaker = {
      acquire: async () => (calls.push('acquire'), { decision: 'probe' as const, state: 'half-open' as const, probeId: 'p1' }),
      recordSuccess: async () => void calls.push('success'),
      recordFailure: async () => (calls.push('failure'), { opened: false }),
      releaseProbe: async (key: string, probeId?: string) => void calls.push(`release ${key} ${probeId}`),
      state: async () => undefined,
    };
    let reads = 0;
    const clock = {
      now: () => {
        reads += 1;
        if (reads > 1) throw new Error('clock broke');
        return 0;
      },
      sleep: async () => undefined,
    };
    const runtime = createToolRuntime({ tools: { crm: async () => 'ok' }, clock, sharedBreaker: sharedBreaker as never, sessionBreaker: false });
    const result = failed(await runtime.run({ name: 'crm', args: {}, callId: 'c', traceId: 't' }));
    expect(result.error.code).toBe('TOOL_EXCEPTION');
    expect(calls).toEqual(['acquire', 'release crm p1']);
  });

  it('the same hallucinated name three times trips the session breaker: the fourth call is circuit_breaker / TOO_MANY_FAILURES', async () => {
    const runtime = createToolRuntime({ tools: [search], clock: createFakeClock(0) });
    const codes: string[] = [];
    for (let call = 0; call < 4; call++) codes.push(failed(await runtime.run({ name: 'serch_the_web_now', args: {}, sessionId: 's1' })).error.code);
    expect(codes).toEqual(['TOOL_NOT_FOUND', 'TOOL_NOT_FOUND', 'TOOL_NOT_FOUND', 'TOO_MANY_FAILURES']);
    const fourth = failed(await runtime.run({ name: 'serch_the_web_now', args: {}, sessionId: 's1' }));
    expect(fourth.error).toMatchObject({ type: 'circuit_breaker', retryable: false, available_tools: ['search_web'] });
    expect(fourth.error.suggestion).toContain('it does not exist');
    // Another session, and another name in this session, are not cut off.
    expect(failed(await runtime.run({ name: 'serch_the_web_now', args: {}, sessionId: 's2' })).error.code).toBe('TOOL_NOT_FOUND');
    expect(failed(await runtime.run({ name: 'other_made_up', args: {}, sessionId: 's1' })).error.code).toBe('TOOL_NOT_FOUND');
    // A real tool of that session still runs.
    expect(await runtime.run({ name: 'search_web', args: { query: 'q' }, sessionId: 's1' })).toMatchObject({ status: 'success' });
  });

  it('a 1 MB hallucinated name repeated trips it too (counted under its bounded key)', async () => {
    const runtime = createToolRuntime({ tools: [search], clock: createFakeClock(0) });
    const name = 'n'.repeat(1_000_000);
    const codes: string[] = [];
    for (let call = 0; call < 4; call++) codes.push(failed(await runtime.run({ name, args: {} })).error.code);
    expect(codes).toEqual(['TOOL_NOT_FOUND', 'TOOL_NOT_FOUND', 'TOOL_NOT_FOUND', 'TOO_MANY_FAILURES']);
  });
});

describe('tool error text reaching detail', () => {
  it('a Go panic, a Java trace and a Python traceback leave their message and no stack or host path', async () => {
    const texts = {
      go: 'panic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/x.go:12 +0x1d\nexit status 2',
      java: 'java.lang.IllegalStateException: bad state\n\tat com.foo.Bar.baz(Bar.java:12)\nCaused by: java.io.IOException: x\n\t... 5 more',
      python: 'Traceback (most recent call last):\n  File "/app/x.py", line 3, in f\n    raise ValueError("bad")\nValueError: bad value',
    };
    const runtime = createToolRuntime({
      tools: Object.fromEntries(
        Object.entries(texts).map(([name, text]) => [
          name,
          async () => {
            throw new Error(text);
          },
        ]),
      ),
      clock: createFakeClock(0),
    });
    const details = Object.fromEntries(
      await Promise.all(Object.keys(texts).map(async (name) => [name, failed(await runtime.run({ name, args: {} })).error.detail])),
    );
    expect(details).toEqual({
      go: 'panic: runtime error: index out of range [5] with length 3\n\nexit status 2',
      java: 'java.lang.IllegalStateException: bad state',
      python: 'ValueError: bad value',
    });
  });
});
