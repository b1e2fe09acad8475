/**
 * The rule of each run and worker option, in one place. `createToolrun` (its `stores`, `hosts`, `hooks` and
 * `limits`), a config module (`assertToolrunConfig`), a worker (`workerSettings`) and a drain
 * (`drainToolDlq`) check the fields they take with these rules; they differ only in the error code
 * and in the name that begins the message.
 */
import { resolveModelPolicy, type ModelPolicyOptions } from '../agent/model-policy.ts';
import { messageOf } from '../core/describe-thrown.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { hostRegistryProblems } from './host-continuation.ts';
import { boundedText, keyList } from './option-text.ts';

/** The largest delay a Node timer takes (2^31 − 1 ms); a larger one fires at once. */
const MAX_TIMER_MS = 2_147_483_647;
/** How many problems a message lists before `and N more`. */
const MAX_LISTED_PROBLEMS = 20;
/** How many characters of a thrown message a problem quotes. */
const MAX_QUOTED_MESSAGE_CHARS = 200;

const boundedMessage = (message: string): string => (message.length > MAX_QUOTED_MESSAGE_CHARS ? `${message.slice(0, MAX_QUOTED_MESSAGE_CHARS)}…` : message);

/** Whether `value` is an array; `false` for a revoked Proxy (which `Array.isArray` throws on). */
function isArray(value: unknown): boolean {
  try {
    return Array.isArray(value);
  } catch {
    return false;
  }
}

/** A received value in an error message: its type, a number as it is, a string's first 40 characters. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(boundedText(value))}`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeof value === 'object' ? 'an object' : typeof value;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !isArray(value);

/** The problem of an option given `value` (`undefined` only for a required option), named `name` (backquoted, with its prefix); `undefined` when it is valid. */
type Rule = (value: unknown, name: string) => string | string[] | undefined;

/** A number in `[minimum, maximum]` (at most `Number.MAX_SAFE_INTEGER`), an integer when `integer`; `ms` says the bound is a duration. */
function numberRule(rule: { integer: boolean; minimum: number; maximum?: number; ms?: boolean }): Rule {
  const maximum = rule.maximum ?? Number.MAX_SAFE_INTEGER;
  const bound = rule.maximum === undefined ? '' : ` (${rule.ms === true ? 'of ms, ' : ''}at most ${rule.maximum})`;
  const expected = `${rule.integer ? `an integer ≥ ${rule.minimum}` : 'a positive number'}${bound}`;
  return (value, name) =>
    typeof value === 'number' && Number.isFinite(value) && value >= rule.minimum && value <= maximum && (!rule.integer || Number.isInteger(value))
      ? undefined
      : `${name} must be ${expected}, received ${describeValue(value)}`;
}

/** The ports of a `Stores` bundle: a Promise of one (`createPostgresStores(…)` without `await`) or one missing a port would fail on the first message with a `TypeError` far from its cause. */
const PORTS = ['conversations', 'runs', 'ledger', 'breakers', 'messageDlq', 'toolDlq', 'queue', 'claims', 'journal'] as const;

function storesProblem(stores: unknown): string | undefined {
  if (typeof stores !== 'object' || stores === null) return `\`stores\` must be a Stores bundle, received ${describeValue(stores)}`;
  if (typeof (stores as { then?: unknown }).then === 'function') {
    return '`stores` is a Promise: await the bundle first (`const stores = await createPostgresStores({ … })`)';
  }
  const missing = PORTS.filter((port) => typeof (stores as Record<string, unknown>)[port] !== 'object' || (stores as Record<string, unknown>)[port] === null);
  return missing.length > 0
    ? `\`stores\` lacks ${missing.map((port) => `\`${port}\``).join(', ')} (pass a whole Stores bundle, e.g. createSqliteStores(…))`
    : undefined;
}

function redeliveryBackoffProblem(value: unknown, name: string): string | undefined {
  const expected = `${name} must be { baseMs, maxMs } with 0 ≤ baseMs ≤ maxMs ≤ ${MAX_TIMER_MS} (ms)`;
  if (!isRecord(value)) return `${expected}, received ${describeValue(value)}`;
  const { baseMs, maxMs, ...rest } = value;
  const isMs = (ms: unknown): ms is number => typeof ms === 'number' && Number.isFinite(ms) && ms >= 0 && ms <= MAX_TIMER_MS;
  const extra = Object.keys(rest);
  if (isMs(baseMs) && isMs(maxMs) && maxMs > 0 && baseMs <= maxMs && extra.length === 0) return undefined;
  const unknown = extra.length > 0 ? `, unknown ${keyList(extra)}` : '';
  return `${expected} and maxMs > 0, received { baseMs: ${describeValue(baseMs)}, maxMs: ${describeValue(maxMs)}${unknown} }`;
}

function modelPolicyProblem(value: unknown, name: string): string | undefined {
  if (!isRecord(value)) return `${name} must be an object ({ maxAttempts, backoff, timeoutMs, ... }), received ${describeValue(value)}`;
  try {
    resolveModelPolicy(value as ModelPolicyOptions);
    return undefined;
  } catch (error) {
    // the policy's message quotes the value it refused, which may be a megabyte long
    return `${name} is invalid: ${boundedMessage(messageOf(error))}`;
  }
}

/** The fields of `createToolrun`'s `limits` (`RunLimits`), checked as the flat options of the same names. */
const LIMIT_FIELDS = ['maxSteps', 'toolRetryBudget', 'maxDeliveries', 'deadlineMs', 'maxBodyBytes'] as const;

function limitsProblem(value: unknown, name: string): string | string[] | undefined {
  if (!isRecord(value)) return `${name} must be an object ({ maxSteps, deadlineMs, … }), received ${describeValue(value)}`;
  // `limits.maxSteps`: the name without its backquotes, as the prefix of each field
  return optionProblems(value, LIMIT_FIELDS, `${name.slice(1, -1)}.`);
}

/** The fields of `createToolrun`'s `hooks` (`RunHooks`): each a function when set. */
const HOOK_FIELDS = ['onRunStart', 'onStepStart', 'onRunEnd', 'onToolCall', 'onEvent'] as const;

function hooksProblem(value: unknown, name: string): string | string[] | undefined {
  if (!isRecord(value)) return `${name} must be an object ({ onRunEnd, onEvent, … }), received ${describeValue(value)}`;
  return optionProblems(value, HOOK_FIELDS, `${name.slice(1, -1)}.`);
}

const functionRule: Rule = (value, name) => (typeof value === 'function' ? undefined : `${name} must be a function, received ${describeValue(value)}`);

const positiveInteger = numberRule({ integer: true, minimum: 1 });
/** The largest `leaseMs` and `pollIntervalMs` of a worker, in ms: a tenth of the largest timer delay (214748364). */
export const MAX_WORKER_DELAY_MS = Math.floor(MAX_TIMER_MS / 10);
/** The most messages (or replays) a worker or a drain handles at once. */
export const MAX_CONCURRENCY = 10_000;
/** A timer delay a worker waits a tenth of (a lease is renewed every third of it); a worker rounds a fraction up to whole ms. */
const workerDelay = numberRule({ integer: false, minimum: Number.MIN_VALUE, maximum: MAX_WORKER_DELAY_MS, ms: true });

/** Each option's rule, in the order its problems are listed. */
const RULES = {
  stores: storesProblem,
  maxSteps: positiveInteger,
  toolRetryBudget: numberRule({ integer: true, minimum: 0 }),
  deadlineMs: numberRule({ integer: false, minimum: Number.MIN_VALUE, maximum: MAX_TIMER_MS, ms: true }),
  maxBodyBytes: positiveInteger,
  maxDeadLetterEntries: positiveInteger,
  maxDeadLetterBytes: positiveInteger,
  maxDeliveries: positiveInteger,
  claimLeaseMs: numberRule({ integer: true, minimum: 1, maximum: MAX_TIMER_MS, ms: true }),
  redeliveryBackoff: redeliveryBackoffProblem,
  modelPolicy: modelPolicyProblem,
  modelName: (value, name) =>
    typeof value === 'string' && value.trim() !== '' ? undefined : `${name} must be a non-empty string, received ${describeValue(value)}`,
  onEvent: functionRule,
  onRunStart: functionRule,
  onStepStart: functionRule,
  onRunEnd: functionRule,
  onToolCall: functionRule,
  hooks: hooksProblem,
  runtimeOptions: (value, name) => (isRecord(value) ? undefined : `${name} must be an object, received ${describeValue(value)}`),
  sharedBreaker: (value, name) => (value === false || isRecord(value) ? undefined : `${name} must be an object or false, received ${describeValue(value)}`),
  hosts: (value) => hostRegistryProblems(value),
  limits: limitsProblem,
  concurrency: numberRule({ integer: true, minimum: 1, maximum: MAX_CONCURRENCY }),
  limit: numberRule({ integer: true, minimum: 0 }),
  leaseMs: workerDelay,
  pollIntervalMs: workerDelay,
} satisfies Record<string, Rule>;

/** An option that has a rule. */
export type CheckedOption = keyof typeof RULES;

/** The options whose value is an object of settings the caller uses after the check: copied, so the check and the use see one value. */
const COPIED: ReadonlySet<string> = new Set(['limits', 'redeliveryBackoff']);

/** `value` of option `field` as the snapshot keeps it: a `limits` or `redeliveryBackoff` object copied (each own enumerable field read once). */
function snapshotValue(field: string, value: unknown): unknown {
  return COPIED.has(field) && isRecord(value) ? { ...value } : value;
}

/** The problem of an option named `name` whose reading threw `error`. */
function unreadable(name: string, error: unknown): string {
  return `${name} could not be read: ${boundedMessage(messageOf(error))}`;
}

/**
 * Reads each of `fields` of the object `options` once, for options that have no rule: the values
 * that are set, and a problem `` `field` could not be read: … `` for each whose reading throws.
 */
export function readOptions<K extends string>(options: object, fields: readonly K[]): { values: Partial<Record<K, unknown>>; problems: string[] } {
  const values: Partial<Record<K, unknown>> = {};
  const problems: string[] = [];
  for (const field of fields) {
    try {
      const value = (options as Record<string, unknown>)[field];
      if (value !== undefined) values[field] = value;
    } catch (error) {
      problems.push(unreadable(`\`${field}\``, error));
    }
  }
  return { values, problems };
}

/**
 * A copy of the options object `value`: its own enumerable fields that are set, each read once, for
 * options handed on to a function that checks them (a later read of `value` cannot change them).
 *
 * @throws ToolrunError `INVALID_OPTIONS` naming `source` for a `value` that is not an object, or
 * whose fields (or field list: a revoked Proxy) cannot be read.
 */
export function copyOptions(value: unknown, source: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null) throwIfProblems([`options must be an object, received ${describeValue(value)}`], 'INVALID_OPTIONS', source);
  let keys: string[] = [];
  try {
    keys = Object.keys(value as object);
  } catch (error) {
    throwIfProblems([unreadable('the options', error)], 'INVALID_OPTIONS', source);
  }
  const { values, problems } = readOptions(value as object, keys);
  throwIfProblems(problems, 'INVALID_OPTIONS', source);
  return values;
}

/**
 * Reads each of `options`' fields among `fields` once and checks it: `values`, a snapshot of the
 * fields that are set (a `limits` or `redeliveryBackoff` object copied), which later reads of
 * `options` (a getter, a Proxy) cannot change, so the caller uses what was checked; and
 * `problems`, in words, in the order of the rules (`undefined` is not set, and is a problem only
 * for a field among `required`). Each name is written as `prefix` + field (`'limits.'` for
 * `limits.maxSteps`). A field whose reading throws is a problem that quotes the thrown message;
 * `options` that is not an object (`null`, a number…) is the one problem `options must be an
 * object, received …`.
 */
export function checkedOptions(
  options: unknown,
  fields: readonly CheckedOption[],
  prefix = '',
  required: readonly CheckedOption[] = [],
): { values: Partial<Record<CheckedOption, unknown>>; problems: string[] } {
  if (typeof options !== 'object' || options === null) return { values: {}, problems: [`options must be an object, received ${describeValue(options)}`] };
  const values: Partial<Record<CheckedOption, unknown>> = {};
  const problems: string[] = [];
  for (const [field, rule] of Object.entries(RULES) as [CheckedOption, Rule][]) {
    if (!fields.includes(field)) continue;
    const name = `\`${prefix}${field}\``;
    let problem: string | string[] | undefined;
    try {
      const value = snapshotValue(field, (options as Record<string, unknown>)[field]);
      if (value === undefined && !required.includes(field)) continue;
      values[field] = value;
      problem = rule(value, name);
    } catch (error) {
      problem = unreadable(name, error);
    }
    if (problem !== undefined) problems.push(...(Array.isArray(problem) ? problem : [problem]));
  }
  return { values, problems };
}

/** The problems of `options`' fields among `fields` (see {@link checkedOptions}), when the caller does not use the values. */
export function optionProblems(options: unknown, fields: readonly CheckedOption[], prefix = '', required: readonly CheckedOption[] = []): string[] {
  return checkedOptions(options, fields, prefix, required).problems;
}

/**
 * Throws a `ToolrunError` with `code` and the message `source: problem; problem…` when `problems`
 * is not empty (the first 20, then `and N more`).
 *
 * @throws ToolrunError `code`
 */
export function throwIfProblems(problems: readonly string[], code: 'INVALID_OPTIONS' | 'INVALID_CONFIG', source: string): void {
  if (problems.length === 0) return;
  const more = problems.length > MAX_LISTED_PROBLEMS ? `; and ${problems.length - MAX_LISTED_PROBLEMS} more` : '';
  throw new ToolrunError(code, `${source}: ${problems.slice(0, MAX_LISTED_PROBLEMS).join('; ')}${more}`);
}
