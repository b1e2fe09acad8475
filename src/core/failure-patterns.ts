/**
 * The failure-pattern library (SPEC.md §4): a catalogue of known failures — error signature →
 * root cause → strategy → suggestion template — that the runtime uses to phrase `suggestion`
 * (option `failurePatterns` of `createToolRuntime`), that users extend with their own, and that
 * `toolrun report` uses to group recorded failures.
 */
import { FAILURE_CODES, type FailureCode } from '../ground/failure-codes.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';

/**
 * What the model (or the operator) should do about a failure:
 * - `fix-arguments`: correct the arguments and call again;
 * - `look-up-first`: get the missing or wrong value from another tool before calling again;
 * - `ask-user`: only the user can supply what is missing;
 * - `change-plan`: the request cannot succeed as made; choose another option;
 * - `use-fallback`: the tool is unusable now; use another tool or answer without it;
 * - `stop-calling`: do not call the tool again in this conversation.
 */
export type FailureStrategy = 'fix-arguments' | 'look-up-first' | 'ask-user' | 'change-plan' | 'use-fallback' | 'stop-calling';

/**
 * Which failures a pattern covers. Every given part must hold:
 * - `code`: the envelope's `error.code` (one or several);
 * - `problem` and/or `field`: some field error has this `problem` and a JSON Pointer `path`
 *   matching `field` (the same field satisfies both);
 * - `message`: tested against the envelope's `message` and `detail` (redacted text);
 * - `tool`: the tool name, exactly or by expression.
 */
export interface FailureSignature {
  code: FailureCode | readonly FailureCode[];
  problem?: string;
  field?: RegExp;
  message?: RegExp;
  tool?: string | RegExp;
}

/**
 * One known failure. `suggestionTemplate` is what the model is told; placeholders:
 * `{tool}`, `{code}`, `{field}` (the field's name, e.g. `dob` for `/passengers/0/dob`), `{path}`,
 * `{expected}`, `{received}`, `{message}` (the envelope's message) and `{suggestion}` (the
 * suggestion the runtime would give without the library, e.g. the validator's field-level fix).
 */
export interface FailurePattern {
  /** Stable, unique, kebab-case (`date-format`); the report groups by it. */
  id: string;
  signature: FailureSignature;
  /** Why this happens, for people reading the report. */
  rootCause: string;
  strategy: FailureStrategy;
  suggestionTemplate: string;
}

/** A failure as a pattern sees it: the envelope's error (or a failure-log record) and the tool. */
export interface FailureSignatureInput {
  toolName: string;
  code: string;
  message: string;
  detail?: string;
  fields?: ReadonlyArray<{ path: string; problem: string; expected?: string; received?: string }>;
}

/**
 * A compiled, immutable catalogue of failure patterns. Safe to share between runtimes. Entries may
 * share an `id`: they are one pattern with several signatures (the report counts them together).
 */
export interface FailurePatternLibrary {
  /** In the order given. */
  readonly patterns: readonly FailurePattern[];
  /**
   * The most specific pattern that matches (a `tool` or `message` condition outweighs a field
   * condition, which outweighs a code alone); on a tie the one given later wins, so patterns
   * appended after the defaults override them. `undefined` when none matches.
   */
  match(failure: FailureSignatureInput): FailurePattern | undefined;
  /**
   * The matching pattern's template, filled in; `undefined` when no pattern matches (the caller
   * keeps its own suggestion). The text is not redacted or bounded here: the runtime does both.
   */
  suggest(failure: FailureSignatureInput & { suggestion: string }): string | undefined;
}

/**
 * The built-in patterns, taken from failures seen in the τ-bench airline data (200 gpt-4o
 * conversations; the 73 refusals of its tools) and from the validator's commonest field errors.
 * Templates that start with `{suggestion}` keep the runtime's precise field-level fix and add the
 * lesson; refusal templates replace the generic default.
 */
export const DEFAULT_FAILURE_PATTERNS: readonly FailurePattern[] = Object.freeze([
  {
    id: 'malformed-json',
    signature: { code: 'MALFORMED_ARGUMENTS' },
    rootCause: 'The model produced arguments that are not one complete JSON object (cut off, single quotes, trailing text).',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion}',
  },
  {
    id: 'date-format',
    signature: { code: ['DATE_FORMAT_ERROR', 'INVALID_FORMAT'], problem: 'format', field: /date|dob|day|time/i },
    rootCause: 'The model copied a date as the user wrote it (2024/1/5, May 20) instead of the ISO 8601 form the tool takes.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion} Write every date you pass as YYYY-MM-DD, whatever form the user used.',
  },
  {
    id: 'date-format',
    signature: { code: 'DATE_FORMAT_ERROR' },
    rootCause: 'The model copied a date as the user wrote it (2024/1/5, May 20) instead of the ISO 8601 form the tool takes.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion} Write every date you pass as YYYY-MM-DD, whatever form the user used.',
  },
  {
    id: 'enum-misread',
    signature: { code: 'INVALID_ENUM' },
    rootCause: 'The model paraphrased a value of a closed set (a capitalised or translated cabin, a synonym of a status) instead of copying it.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion} Copy one of the allowed values exactly; do not translate, abbreviate or change its case.',
  },
  {
    id: 'scale-misread',
    signature: { code: 'OUT_OF_RANGE', problem: 'range' },
    rootCause: 'The model used another scale than the field’s (a 0–10 or "high/low" priority for a 1–5 one) or forgot a bound.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion} Read the scale of {field} in the tool description before choosing a value.',
  },
  {
    id: 'wrong-type',
    signature: { code: 'INVALID_TYPE' },
    rootCause: 'The model sent a value of the wrong JSON type (a number as a string, a word for a number, one object for a list).',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion}',
  },
  {
    id: 'missing-required-id',
    signature: { code: ['MISSING_REQUIRED', 'SCHEMA_VALIDATION_FAILED'], problem: 'required', field: /(?:(?:^|[/_])(?:id|ID)|[a-z]Id)$/ },
    rootCause: 'The model called before it had an identifier that only a lookup or the user can give (a user, reservation or payment id).',
    strategy: 'look-up-first',
    suggestionTemplate: '{suggestion} Do not invent {field}: take it from an earlier tool result, look it up, or ask the user.',
  },
  {
    id: 'missing-required',
    signature: { code: 'MISSING_REQUIRED' },
    rootCause: 'The model left out a required argument, often one the user has not given yet.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion} If you do not know the value, ask the user for it instead of guessing.',
  },
  {
    id: 'unknown-parameter',
    signature: { code: 'UNKNOWN_PARAMETER' },
    rootCause: 'The model invented a parameter or used the name another tool has.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion}',
  },
  // The families of argument mistakes real models make, as the wording layer names them.
  {
    id: 'truncated-json',
    signature: { code: 'MALFORMED_ARGUMENTS', message: /truncated JSON/ },
    rootCause: 'The arguments were cut off mid-way, as when the model’s output hits its token limit.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion}',
  },
  {
    id: 'json-arithmetic',
    signature: { code: 'MALFORMED_ARGUMENTS', message: /is an expression; JSON takes only its result/ },
    rootCause: 'The model wrote a computation (`3*4`) where JSON needs its result.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion} Compute every value yourself; JSON holds numbers, not expressions.',
  },
  {
    id: 'json-comment',
    signature: { code: 'MALFORMED_ARGUMENTS', message: /a comment \(/ },
    rootCause: 'The model annotated its arguments with // or /* */ comments, which JSON does not have.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion}',
  },
  {
    id: 'json-single-quotes',
    signature: { code: 'MALFORMED_ARGUMENTS', message: /in single quotes/ },
    rootCause: 'The model wrote a Python or JavaScript literal with single-quoted strings instead of JSON.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion}',
  },
  {
    id: 'json-python-literal',
    signature: { code: 'MALFORMED_ARGUMENTS', message: /is Python; JSON writes/ },
    rootCause: 'The model wrote Python’s True, False or None in JSON text.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion}',
  },
  {
    id: 'json-stray-quote',
    signature: { code: 'MALFORMED_ARGUMENTS', message: /inside the string .* ends it early/ },
    rootCause: 'A double quote inside a string value (a name such as O"Brien, a quotation) was not escaped.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion}',
  },
  {
    id: 'json-punctuation',
    signature: { code: 'MALFORMED_ARGUMENTS', message: /a comma before|without a comma|has no double quotes/ },
    rootCause: 'The JSON text has a trailing comma, a missing comma or an unquoted property name.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion}',
  },
  {
    id: 'python-literal-in-string',
    signature: { code: ['INVALID_TYPE', 'SCHEMA_VALIDATION_FAILED'], problem: 'type', message: /is a Python literal inside a string/ },
    rootCause: 'The model sent a list or dict as the text of a Python literal ("[\'vegan\']") instead of the JSON value.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion} Send lists and objects as JSON values, never as text.',
  },
  {
    id: 'json-in-string',
    signature: { code: ['INVALID_TYPE', 'SCHEMA_VALIDATION_FAILED'], problem: 'type', message: /not a string holding its JSON/ },
    rootCause: 'The model serialised a list or object to a string (double-encoded JSON) instead of sending the value.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion} Send lists and objects as JSON values, never as text.',
  },
  {
    id: 'boolean-as-string',
    signature: { code: ['INVALID_TYPE', 'SCHEMA_VALIDATION_FAILED'], problem: 'type', message: /a JSON boolean/ },
    rootCause: 'The model quoted a boolean, often capitalised as in Python ("True", "False").',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion} Write booleans as true or false: lowercase, without quotes.',
  },
  {
    id: 'number-as-string',
    signature: { code: ['INVALID_TYPE', 'SCHEMA_VALIDATION_FAILED'], problem: 'type', message: /\(a number\), not/ },
    rootCause: 'The model quoted a number ("2" for 2).',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion}',
  },
  {
    id: 'null-for-value',
    signature: { code: ['INVALID_TYPE', 'SCHEMA_VALIDATION_FAILED'], problem: 'type', message: /null is not accepted here/ },
    rootCause: 'The model sent null for a value it did not have, where the field needs a real value.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion} If you do not have the value, ask the user for it instead of sending null.',
  },
  {
    id: 'misplaced-value',
    signature: {
      code: ['MISSING_REQUIRED', 'UNKNOWN_PARAMETER', 'SCHEMA_VALIDATION_FAILED'],
      message: /which is not a parameter: if it holds this value|it probably holds the required/,
    },
    rootCause: 'The model sent a required value under another name (`scores` for `gradeDict`, `class` for `_class`).',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion} Use the parameter names exactly as the tool schema spells them.',
  },
  {
    id: 'unknown-parameter-weak-match',
    signature: { code: 'UNKNOWN_PARAMETER', message: /the nearest allowed name is/ },
    rootCause: 'The model invented a parameter that only loosely resembles a real one (`wave_file` for `wave_type`).',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion} Check the tool schema for the parameter you meant.',
  },
  {
    id: 'nonexistent-date',
    signature: { code: ['DATE_FORMAT_ERROR', 'INVALID_FORMAT'], message: /does not exist|there is no (?:month|hour|minute|second)/ },
    rootCause: 'The model wrote a date or time in the right layout that does not exist (2025-02-30, hour 25).',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion} Check the calendar: months have 28 to 31 days.',
  },
  {
    id: 'date-time-incomplete',
    signature: { code: ['DATE_FORMAT_ERROR', 'INVALID_FORMAT'], message: /a date-time needs/ },
    rootCause: 'The model left out part of an RFC 3339 date-time: the time zone (Z or an offset), the seconds or the time.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion} Write date-times in full: YYYY-MM-DDTHH:MM:SS and a time zone (Z for UTC).',
  },
  {
    id: 'format-mismatch',
    signature: { code: 'INVALID_FORMAT', problem: 'format' },
    rootCause: 'The model sent a value in another form than the field’s format (an e-mail address, a URI, a UUID).',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion}',
  },
  {
    id: 'tool-name-by-arguments',
    signature: { code: 'TOOL_NOT_FOUND', message: /\(it takes / },
    rootCause: 'The model mixed the names of two tools (`circle.calculate_perimeter`); the arguments it sent belong to another one.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion}',
  },
  {
    id: 'tool-name-from-arguments',
    signature: { code: 'TOOL_NOT_FOUND', message: /its parameters fit the arguments/ },
    rootCause: 'The model gave a name that carries nothing (`func1`, an empty name); its arguments fit exactly one offered tool.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion}',
  },
  {
    id: 'nested-call',
    signature: { code: 'TOOL_NOT_FOUND', message: /calls cannot be nested/ },
    rootCause: 'The model wrote a call inside another call (`f(x=f(…))`, or a call object as an argument); each call must stand alone.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion}',
  },
  {
    id: 'tool-name-reordered',
    signature: { code: 'TOOL_NOT_FOUND', message: /the same words in another order/ },
    rootCause: 'The model wrote the parts of a tool name in another order (`evolution.prediction` for `prediction.evolution`).',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion}',
  },
  {
    id: 'parallel-wrapper',
    signature: { code: 'TOOL_NOT_FOUND', message: /is a wrapper some models use for several calls/ },
    rootCause: 'An OpenAI model wrapped several calls in `multi_tool_use.parallel`, a tool it was never given, and the wrapper could not be read.',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion}',
  },
  {
    id: 'amount-mismatch',
    signature: { code: 'INVALID_INPUT', message: /does not add up|do not add up|total price is/i },
    rootCause:
      'The model computed a total wrongly (price × passengers, insurance, paid bags) and its payments do not sum to it — 24 of the 73 τ-bench airline refusals.',
    strategy: 'fix-arguments',
    suggestionTemplate:
      'The amounts you sent do not add up ({message}). Recompute the total from the prices, the number of passengers and every fee, make the payments sum to exactly that total, and call again.',
  },
  {
    id: 'payment-method-not-found',
    signature: { code: 'NOT_FOUND', message: /payment (?:method|id)[^.]*not found/i },
    rootCause: 'The model used a payment id that is not in the user’s profile (a retyped or invented id, or one already used up).',
    strategy: 'look-up-first',
    suggestionTemplate:
      '{message}. Use a payment id exactly as it appears in the user’s profile (read it with the user-details tool), or ask the user which method to use.',
  },
  {
    id: 'record-not-found',
    signature: { code: 'NOT_FOUND' },
    rootCause: 'An identifier was mistyped, invented, or belongs to someone else (a reservation, user or flight that does not exist).',
    strategy: 'look-up-first',
    suggestionTemplate:
      '{message}. Do not guess identifiers: check it against earlier tool results or a lookup tool, or ask the user to confirm it, before calling {tool} again.',
  },
  {
    id: 'capacity-unavailable',
    signature: { code: 'PRECONDITION_FAILED', message: /not available|not enough seats|sold out|no (?:seats|capacity)/i },
    rootCause: 'The chosen option was full or not offered on that date when the call was made.',
    strategy: 'change-plan',
    suggestionTemplate: '{message}. Do not repeat the same request: search again for what is available and offer the user an alternative.',
  },
  {
    id: 'insufficient-balance',
    signature: { code: 'PRECONDITION_FAILED', message: /balance|insufficient funds|not enough (?:money|credit)/i },
    rootCause: 'The chosen payment method cannot cover the amount (a gift card or certificate balance too small).',
    strategy: 'ask-user',
    suggestionTemplate: '{message}. Do not retry with the same payment method: pick another one from the user’s profile or ask the user.',
  },
  {
    id: 'payment-method-not-allowed',
    signature: { code: 'PRECONDITION_FAILED', message: /cannot be used/i },
    rootCause: 'A payment method the rules exclude for this action (a certificate to pay a flight change).',
    strategy: 'ask-user',
    suggestionTemplate: '{message}. This method is not accepted for this action: ask the user for another one.',
  },
  {
    id: 'precondition-refused',
    signature: { code: 'PRECONDITION_FAILED' },
    rootCause: 'A business rule of the tool refused the action as asked.',
    strategy: 'change-plan',
    suggestionTemplate: '{message}. Do not repeat this call unchanged: change the plan, or explain the rule to the user.',
  },
  {
    id: 'unknown-tool',
    signature: { code: 'TOOL_NOT_FOUND' },
    rootCause: 'The model called a tool that does not exist (a hallucinated or versioned name).',
    strategy: 'fix-arguments',
    suggestionTemplate: '{suggestion}',
  },
  {
    id: 'transient-exhausted',
    signature: { code: ['TIMEOUT', 'UNAVAILABLE', 'RATE_LIMITED', 'NETWORK_ERROR', 'BUDGET_EXHAUSTED'] },
    rootCause: 'The service behind the tool was slow, down or rate limited past the in-band retries.',
    strategy: 'use-fallback',
    suggestionTemplate: '{suggestion}',
  },
  {
    id: 'access-refused',
    signature: { code: ['AUTH_EXPIRED', 'PERMISSION_DENIED'] },
    rootCause: 'The tool’s credentials were rejected or lack a permission; calling again cannot help.',
    strategy: 'stop-calling',
    suggestionTemplate: '{suggestion}',
  },
  {
    id: 'tool-bug',
    signature: { code: ['TOOL_EXCEPTION', 'OUTPUT_TOO_LARGE'] },
    rootCause: 'The tool itself failed (an unexpected exception or an unusable result).',
    strategy: 'use-fallback',
    suggestionTemplate: '{suggestion}',
  },
  {
    id: 'repeated-failure',
    signature: { code: 'TOO_MANY_FAILURES' },
    rootCause: 'The model kept calling a tool that kept failing in this conversation; the session breaker cut it off.',
    strategy: 'stop-calling',
    suggestionTemplate: '{suggestion}',
  },
  {
    id: 'broken-for-everyone',
    signature: { code: 'CIRCUIT_OPEN' },
    rootCause: 'The tool is misconfigured for every run (credentials rejected, endpoint gone); the shared breaker is open.',
    strategy: 'use-fallback',
    suggestionTemplate: '{suggestion}',
  },
] satisfies FailurePattern[]);

const STRATEGIES: ReadonlySet<string> = new Set<FailureStrategy>(['fix-arguments', 'look-up-first', 'ask-user', 'change-plan', 'use-fallback', 'stop-calling']);

interface CompiledPattern {
  pattern: FailurePattern;
  index: number;
  codes: ReadonlySet<string>;
  specificity: number;
  message: RegExp | undefined;
  field: RegExp | undefined;
  tool: string | RegExp | undefined;
}

/** A copy of `pattern` without the `g`/`y` flags, whose `lastIndex` would make `test` stateful. */
function stateless(pattern: RegExp): RegExp {
  return pattern.global || pattern.sticky ? new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, '')) : pattern;
}

function compile(pattern: FailurePattern, index: number): CompiledPattern {
  const invalid = (problem: string): never => {
    throw new ToolrunError('INVALID_OPTIONS', `failure pattern ${JSON.stringify(pattern?.id ?? index)}: ${problem}`);
  };
  if (typeof pattern !== 'object' || pattern === null) invalid('expected an object');
  if (typeof pattern.id !== 'string' || !/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(pattern.id)) invalid('id must be kebab-case');
  if (typeof pattern.suggestionTemplate !== 'string' || pattern.suggestionTemplate.trim() === '') invalid('suggestionTemplate must be a non-empty string');
  if (typeof pattern.rootCause !== 'string') invalid('rootCause must be a string');
  if (!STRATEGIES.has(pattern.strategy)) invalid(`strategy must be one of ${[...STRATEGIES].join(', ')}`);
  const signature = pattern.signature;
  if (typeof signature !== 'object' || signature === null) invalid('signature must be an object');
  const codes =
    typeof signature.code === 'string'
      ? [signature.code]
      : Array.isArray(signature.code)
        ? signature.code
        : invalid('signature.code must be a failure code or a list of them');
  for (const code of codes) if (!(code in FAILURE_CODES)) invalid(`unknown failure code ${JSON.stringify(code)}`);
  const tool = signature.tool instanceof RegExp ? stateless(signature.tool) : signature.tool;
  return {
    pattern,
    index,
    codes: new Set(codes),
    specificity:
      (tool !== undefined ? 8 : 0) +
      (signature.message !== undefined ? 4 : 0) +
      (signature.field !== undefined ? 2 : 0) +
      (signature.problem !== undefined ? 1 : 0),
    message: signature.message ? stateless(signature.message) : undefined,
    field: signature.field ? stateless(signature.field) : undefined,
    tool,
  };
}

function matches(compiled: CompiledPattern, failure: FailureSignatureInput): boolean {
  if (!compiled.codes.has(failure.code)) return false;
  const { tool, message, field } = compiled;
  if (tool !== undefined && !(typeof tool === 'string' ? tool === failure.toolName : tool.test(failure.toolName))) return false;
  if (message !== undefined && !message.test(failure.message) && !(failure.detail !== undefined && message.test(failure.detail))) return false;
  const problem = compiled.pattern.signature.problem;
  if (problem !== undefined || field !== undefined) {
    const fields = failure.fields ?? [];
    if (!fields.some((candidate) => (problem === undefined || candidate.problem === problem) && (field === undefined || field.test(candidate.path))))
      return false;
  }
  return true;
}

/** The field a pattern is about: the first field satisfying its field conditions, else the first field. */
function subjectField(compiled: CompiledPattern, failure: FailureSignatureInput) {
  const fields = failure.fields ?? [];
  const problem = compiled.pattern.signature.problem;
  return (
    fields.find(
      (candidate) => (problem === undefined || candidate.problem === problem) && (compiled.field === undefined || compiled.field.test(candidate.path)),
    ) ?? fields[0]
  );
}

function fieldName(path: string): string {
  const tokens = path.split('/').filter((token) => token !== '' && !/^\d+$/.test(token));
  const last = tokens[tokens.length - 1];
  return last === undefined ? 'the arguments' : last.replaceAll('~1', '/').replaceAll('~0', '~');
}

function stripTrailingPeriod(text: string): string {
  return text.replace(/[.\s]+$/, '');
}

/** `text` ending as a sentence, for a placeholder that more text follows. */
function asSentence(text: string): string {
  const trimmed = text.trimEnd();
  return trimmed === '' || /[.!?…:]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

/**
 * Compiles a failure-pattern library.
 *
 * @param patterns - @defaultValue {@link DEFAULT_FAILURE_PATTERNS}; extend with
 *   `createFailurePatternLibrary([...DEFAULT_FAILURE_PATTERNS, ...mine])` (later patterns win ties).
 * @throws ToolrunError `INVALID_OPTIONS` for a malformed pattern: an id that is not kebab-case, an
 *   unknown failure code or strategy, an empty template.
 */
export function createFailurePatternLibrary(patterns: readonly FailurePattern[] = DEFAULT_FAILURE_PATTERNS): FailurePatternLibrary {
  if (!Array.isArray(patterns)) throw new ToolrunError('INVALID_OPTIONS', 'createFailurePatternLibrary expects an array of patterns');
  const compiled = patterns.map(compile);
  const byCode = new Map<string, CompiledPattern[]>();
  for (const entry of compiled) {
    for (const code of entry.codes) {
      const list = byCode.get(code) ?? [];
      list.push(entry);
      byCode.set(code, list);
    }
  }

  const find = (failure: FailureSignatureInput): CompiledPattern | undefined => {
    let best: CompiledPattern | undefined;
    for (const candidate of byCode.get(failure.code) ?? []) {
      if (best !== undefined && (candidate.specificity < best.specificity || (candidate.specificity === best.specificity && candidate.index < best.index)))
        continue;
      if (matches(candidate, failure)) best = candidate;
    }
    return best;
  };

  return {
    patterns: Object.freeze([...patterns]),
    match: (failure) => find(failure)?.pattern,
    suggest(failure) {
      const found = find(failure);
      if (found === undefined) return undefined;
      const field = subjectField(found, failure);
      const values: Record<string, string> = {
        tool: failure.toolName,
        code: failure.code,
        field: field ? fieldName(field.path) : 'the arguments',
        path: field?.path ?? '',
        expected: field?.expected ?? 'the documented value',
        received: field?.received ?? 'nothing',
        message: stripTrailingPeriod(failure.message),
        suggestion: failure.suggestion,
      };
      return found.pattern.suggestionTemplate
        .replace(/\{(tool|code|field|path|expected|received|message|suggestion)\}/g, (match: string, name: string, offset: number, template: string) =>
          name === 'suggestion' && /\S/.test(template.slice(offset + match.length)) ? asSentence(failure.suggestion) : (values[name] ?? ''),
        )
        .replace(/\s{2,}/g, ' ')
        .trim();
    },
  };
}
