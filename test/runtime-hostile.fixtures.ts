/**
 * Functions run by `runBounded` (in a worker thread that is terminated on overrun) for the tests of
 * test/runtime-hostile.test.ts: each one could hang or exhaust memory if its guard were missing.
 * Inputs and results are structured-cloneable summaries.
 */
import { createToolRuntime, type ToolRuntime } from '../src/core/create-tool-runtime.ts';
import { defineTool } from '../src/core/define-tool.ts';
import { sanitiseErrorText } from '../src/core/build-failure.ts';
import type { ToolResult } from '../src/ground/tool-result.ts';

interface Summary {
  status: string;
  code?: string;
  fields?: string[];
  bytes: number;
}

function summarise(result: ToolResult): Summary {
  return {
    status: result.status,
    ...(result.status === 'failed' ? { code: result.error.code, fields: (result.error.fields ?? []).map((field) => field.path) } : {}),
    bytes: new TextEncoder().encode(JSON.stringify(result)).length,
  };
}

/** A user schema `pattern` of `^(a+)+$` against a model argument of `length` "a" and a final "!". */
export async function catastrophicPattern(input: { length: number }): Promise<Summary & { executed: number }> {
  let executed = 0;
  const runtime = createToolRuntime({
    tools: [
      defineTool({
        name: 'lookup',
        description: 'Looks a code up',
        inputSchema: { type: 'object', properties: { code: { type: 'string', pattern: '^(a+)+$' } }, required: ['code'] },
        execute: async () => (executed += 1),
      }),
    ],
  });
  const result = await runtime.run({ name: 'lookup', args: JSON.stringify({ code: `${'a'.repeat(input.length)}!` }) });
  return { ...summarise(result), executed };
}

/**
 * A tool that calls `runtime.run` on itself: `sync` returns the nested call's promise from a plain
 * function, `async` awaits a resolved promise first (a chain of awaits that never reaches a macrotask).
 */
export async function selfRecursion(input: {
  mode: 'sync' | 'async';
  maxInFlightCalls?: number;
  timeoutMs?: number;
}): Promise<Summary & { executions: number; heapMb: number }> {
  let executions = 0;
  const holder: { runtime?: ToolRuntime } = {};
  const execute =
    input.mode === 'sync'
      ? (args: unknown) => {
          executions += 1;
          return holder.runtime!.run({ name: 'recurse', args });
        }
      : async (args: unknown) => {
          executions += 1;
          await Promise.resolve();
          return holder.runtime!.run({ name: 'recurse', args });
        };
  const runtime = createToolRuntime({
    tools: [
      defineTool({
        name: 'recurse',
        description: 'Calls itself',
        inputSchema: { type: 'object' },
        execute,
        ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
      }),
    ],
    ...(input.maxInFlightCalls !== undefined ? { maxInFlightCalls: input.maxInFlightCalls } : {}),
  });
  holder.runtime = runtime;
  const result = await runtime.run({ name: 'recurse', args: {} });
  return { ...summarise(result), executions, heapMb: Math.round(process.memoryUsage().heapUsed / 1e6) };
}

/**
 * A tool that calls a cheap tool of its runtime in an endless loop, never waiting for I/O and
 * ignoring its signal: only the event-loop yield lets its `timeoutMs` fire.
 */
export async function endlessNestedLoop(input: { timeoutMs: number }): Promise<Summary & { nestedCalls: number; timerFired: boolean }> {
  let nestedCalls = 0;
  let timerFired = false;
  setTimeout(() => {
    timerFired = true;
  }, 1);
  const holder: { runtime?: ToolRuntime } = {};
  const runtime = createToolRuntime({
    tools: {
      noop: async () => 'ok',
      spin: defineTool({
        name: 'spin',
        description: 'Calls noop forever',
        inputSchema: { type: 'object' },
        timeoutMs: input.timeoutMs,
        execute: async () => {
          for (;;) {
            nestedCalls += 1;
            await holder.runtime!.run({ name: 'noop', args: {} });
          }
        },
      }),
    },
  });
  holder.runtime = runtime;
  const result = await runtime.run({ name: 'spin', args: {} });
  return { ...summarise(result), nestedCalls, timerFired };
}

/** sanitiseErrorText on 1 MB of an adversarial shape; returns the output length. */
export function sanitiseAdversarial(input: { kind: string }): number {
  const megabyte = 1_000_000;
  const shapes: Record<string, () => string> = {
    spaces: () => ' '.repeat(megabyte),
    'spaces-then-at': () => `${' '.repeat(megabyte)}at <path>`,
    'at-words': () => ' at'.repeat(megabyte / 3),
    'windows-spaced': () => `C:\\${'a '.repeat(megabyte / 2)}`,
    'windows-repeated': () => 'C:\\C:\\'.repeat(megabyte / 6),
    'posix-deep': () => `/home${'/a'.repeat(megabyte / 2)}`,
    'posix-no-root': () => '/a.'.repeat(megabyte / 3),
    slashes: () => '/'.repeat(megabyte),
    'unc-spaced': () => `\\\\a\\${'b '.repeat(megabyte / 2)}`,
    'frame-lines': () => '    at f (/x.js:1:1)\n'.repeat(megabyte / 22),
    'go-dump': () => `goroutine 1 [running]:\n${'main.f(0x1, 0x2)\n\t/src/x.go:12 +0x1d\n'.repeat(megabyte / 40)}`,
    'go-function-parens': () => `goroutine 1 [running]:\n${'('.repeat(megabyte)}`,
    'python-traceback': () => `Traceback (most recent call last):\n${'  File "/app/x.py", line 3, in f\n    raise E\n'.repeat(megabyte / 45)}E: x`,
    'path-positions': () => '(<path>:1'.repeat(megabyte / 9),
  };
  const make = shapes[input.kind];
  if (!make) throw new Error(`unknown shape ${input.kind}`);
  return sanitiseErrorText(make()).length;
}

/** {@link sanitiseAdversarial} for every shape, one after the other: the output length of each. */
export function sanitiseAllAdversarial(): Record<string, number> {
  const lengths: Record<string, number> = {};
  for (const kind of SANITISE_SHAPES) lengths[kind] = sanitiseAdversarial({ kind });
  return lengths;
}

/** The shapes {@link sanitiseAdversarial} knows. */
export const SANITISE_SHAPES = [
  'spaces',
  'spaces-then-at',
  'at-words',
  'windows-spaced',
  'windows-repeated',
  'posix-deep',
  'posix-no-root',
  'slashes',
  'unc-spaced',
  'frame-lines',
  'go-dump',
  'go-function-parens',
  'python-traceback',
  'path-positions',
] as const;
