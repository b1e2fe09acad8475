import { describe, expect, it } from 'vitest';
import { createToolRuntime } from './create-tool-runtime.ts';
import { defineTool } from './define-tool.ts';
import { createFailurePatternLibrary, DEFAULT_FAILURE_PATTERNS, type FailurePattern } from './failure-patterns.ts';
import { ToolError } from './tool-error.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';

const library = createFailurePatternLibrary();

describe('matching', () => {
  it.each([
    // refusal texts as the τ-bench airline tools answered them (gpt-4o-airline.tool_calls.jsonl)
    ['NOT_FOUND', 'payment method certificate_9305787 not found', 'payment-method-not-found'],
    ['NOT_FOUND', 'payment method not found', 'payment-method-not-found'],
    ['NOT_FOUND', 'reservation ZFA04Z not found', 'record-not-found'],
    ['PRECONDITION_FAILED', 'flight HAT271 not available on date 2024-05-19', 'capacity-unavailable'],
    ['PRECONDITION_FAILED', 'not enough seats on flight HAT256', 'capacity-unavailable'],
    ['PRECONDITION_FAILED', 'gift card balance is not enough', 'insufficient-balance'],
    ['PRECONDITION_FAILED', 'not enough balance in payment method gift_card_8190333', 'insufficient-balance'],
    ['PRECONDITION_FAILED', 'certificate cannot be used to update reservation', 'payment-method-not-allowed'],
    ['PRECONDITION_FAILED', 'reservation is locked', 'precondition-refused'],
    ['INVALID_INPUT', 'payment amount does not add up, total price is 2598, but paid 2568', 'amount-mismatch'],
    ['UNAVAILABLE', 'book_reservation is unavailable (HTTP 503)', 'transient-exhausted'],
  ] as const)('%s "%s" → %s', (code, message, id) => {
    expect(library.match({ toolName: 'book_reservation', code, message })?.id).toBe(id);
  });

  it('a field condition outweighs a code alone: a missing id is not a plain missing field', () => {
    expect(
      library.match({ toolName: 't', code: 'MISSING_REQUIRED', message: 'user_id is missing', fields: [{ path: '/user_id', problem: 'required' }] })?.id,
    ).toBe('missing-required-id');
    expect(
      library.match({ toolName: 't', code: 'MISSING_REQUIRED', message: 'origin is missing', fields: [{ path: '/origin', problem: 'required' }] })?.id,
    ).toBe('missing-required');
    expect(library.match({ toolName: 't', code: 'MISSING_REQUIRED', message: 'x', fields: [{ path: '/paid', problem: 'required' }] })?.id).toBe(
      'missing-required',
    );
    expect(library.match({ toolName: 't', code: 'MISSING_REQUIRED', message: 'x', fields: [{ path: '/reservationId', problem: 'required' }] })?.id).toBe(
      'missing-required-id',
    );
  });

  it('problem and field must hold for the same field', () => {
    const mine = createFailurePatternLibrary([
      {
        id: 'dob-format',
        signature: { code: 'DATE_FORMAT_ERROR', problem: 'format', field: /dob$/ },
        rootCause: '',
        strategy: 'fix-arguments',
        suggestionTemplate: 'x',
      },
    ]);
    const fields = [
      { path: '/dob', problem: 'required' },
      { path: '/date', problem: 'format' },
    ];
    expect(mine.match({ toolName: 't', code: 'DATE_FORMAT_ERROR', message: 'm', fields })).toBeUndefined();
    expect(mine.match({ toolName: 't', code: 'DATE_FORMAT_ERROR', message: 'm', fields: [{ path: '/passengers/0/dob', problem: 'format' }] })?.id).toBe(
      'dob-format',
    );
  });

  it('users extend the defaults; a pattern of theirs with the same signature wins the tie, a tool-specific one wins outright', () => {
    const mine: FailurePattern[] = [
      {
        id: 'enum-misread-cabin',
        signature: { code: 'INVALID_ENUM' },
        rootCause: 'ours',
        strategy: 'fix-arguments',
        suggestionTemplate: 'Cabins are lowercase: {expected}.',
      },
      {
        id: 'priority-scale',
        signature: { code: 'OUT_OF_RANGE', tool: /^create_ticket$/ },
        rootCause: 'scale',
        strategy: 'fix-arguments',
        suggestionTemplate: 'Priority: 1 is lowest, 5 is highest.',
      },
    ];
    const extended = createFailurePatternLibrary([...DEFAULT_FAILURE_PATTERNS, ...mine]);
    expect(extended.match({ toolName: 'book', code: 'INVALID_ENUM', message: 'cabin' })?.id).toBe('enum-misread-cabin');
    expect(extended.match({ toolName: 'create_ticket', code: 'OUT_OF_RANGE', message: 'p', fields: [{ path: '/priority', problem: 'range' }] })?.id).toBe(
      'priority-scale',
    );
    expect(extended.match({ toolName: 'other', code: 'OUT_OF_RANGE', message: 'p', fields: [{ path: '/priority', problem: 'range' }] })?.id).toBe(
      'scale-misread',
    );
  });

  it('a global regular expression does not make matching stateful', () => {
    const mine = createFailurePatternLibrary([
      { id: 'locked', signature: { code: 'PRECONDITION_FAILED', message: /locked/g }, rootCause: '', strategy: 'change-plan', suggestionTemplate: 'wait' },
    ]);
    for (let round = 0; round < 3; round += 1) expect(mine.match({ toolName: 't', code: 'PRECONDITION_FAILED', message: 'record locked' })?.id).toBe('locked');
  });

  it('every default failure code with a generic suggestion has a pattern', () => {
    const covered = new Set(
      DEFAULT_FAILURE_PATTERNS.flatMap((pattern) => (typeof pattern.signature.code === 'string' ? [pattern.signature.code] : [...pattern.signature.code])),
    );
    for (const code of ['NOT_FOUND', 'PRECONDITION_FAILED', 'INVALID_ENUM', 'DATE_FORMAT_ERROR', 'MISSING_REQUIRED', 'TOO_MANY_FAILURES', 'CIRCUIT_OPEN'])
      expect(covered.has(code as never)).toBe(true);
  });
});

describe('creation', () => {
  it.each([
    [{ id: 'Bad Id' }, /kebab-case/],
    [{ signature: { code: 'NOPE' } }, /unknown failure code "NOPE"/],
    [{ strategy: 'pray' }, /strategy must be one of/],
    [{ suggestionTemplate: ' ' }, /suggestionTemplate/],
  ])('rejects a malformed pattern with INVALID_OPTIONS (%j)', (override, message) => {
    const pattern = {
      id: 'ok',
      signature: { code: 'NOT_FOUND' },
      rootCause: '',
      strategy: 'look-up-first',
      suggestionTemplate: 'x',
      ...override,
    } as unknown as FailurePattern;
    let thrown: unknown;
    try {
      createFailurePatternLibrary([pattern]);
    } catch (error) {
      thrown = error;
    }
    expect(ToolrunError.is(thrown) && thrown.code).toBe('INVALID_OPTIONS');
    expect((thrown as Error).message).toMatch(message);
  });
});

describe('suggest', () => {
  it('fills the placeholders from the failure and keeps the runtime’s own suggestion where the template asks', () => {
    const text = library.suggest({
      toolName: 'book_reservation',
      code: 'MISSING_REQUIRED',
      message: 'user_id is missing',
      suggestion: 'Add "user_id" (string), and call again',
      fields: [{ path: '/user_id', problem: 'required', expected: 'string' }],
    });
    expect(text).toBe('Add "user_id" (string), and call again. Do not invent user_id: take it from an earlier tool result, look it up, or ask the user.');
    expect(
      library.suggest({ toolName: 'update_reservation_flights', code: 'NOT_FOUND', message: 'reservation ZFA04Z not found.', suggestion: 'default' }),
    ).toBe(
      'reservation ZFA04Z not found. Do not guess identifiers: check it against earlier tool results or a lookup tool, or ask the user to confirm it, before calling update_reservation_flights again.',
    );
    expect(createFailurePatternLibrary([]).suggest({ toolName: 't', code: 'NOT_FOUND', message: 'm', suggestion: 's' })).toBeUndefined();
  });
});

describe('the runtime option failurePatterns', () => {
  const lookup = defineTool({
    name: 'get_reservation_details',
    description: 'Reads a reservation',
    inputSchema: { type: 'object', properties: { reservation_id: { type: 'string' }, cabin: { enum: ['economy', 'business'] } }, required: ['reservation_id'] },
    execute: ({ reservation_id }) => {
      if (reservation_id === 'HINTED')
        throw new ToolError({ kind: 'not_found', message: 'reservation HINTED not found', suggestion: 'Ask the user for the six-letter code.' });
      throw new ToolError({ kind: 'not_found', message: `reservation ${reservation_id} not found for mia.li3818@example.com` });
    },
  });

  it('phrases the suggestion with the matching pattern; without the option the default stays', async () => {
    const withPatterns = createToolRuntime({ tools: [lookup], failurePatterns: library });
    const without = createToolRuntime({ tools: [lookup] });
    const phrased = await withPatterns.run({ name: 'get_reservation_details', args: { reservation_id: 'ZFA04Z' } });
    const plain = await without.run({ name: 'get_reservation_details', args: { reservation_id: 'ZFA04Z' } });
    expect(phrased.status === 'failed' && phrased.error.suggestion).toBe(
      'reservation ZFA04Z not found for ***. Do not guess identifiers: check it against earlier tool results or a lookup tool, or ask the user to confirm it, before calling get_reservation_details again.',
    );
    expect(plain.status === 'failed' && plain.error.suggestion).toBe(
      'What was asked for does not exist. Check the identifiers with the user or a lookup tool before calling again.',
    );
  });

  it('keeps the field-level fix of the validator inside the phrased suggestion', async () => {
    const runtime = createToolRuntime({ tools: [lookup], failurePatterns: library });
    const result = await runtime.run({ name: 'get_reservation_details', args: { reservation_id: 'A', cabin: 'Economy' } });
    expect(result.status === 'failed' && result.error.suggestion).toBe(
      'Use "economy" for cabin, and call again. Copy one of the allowed values exactly; do not translate, abbreviate or change its case.',
    );
  });

  it('a tool’s own suggestion wins over the patterns', async () => {
    const runtime = createToolRuntime({ tools: [lookup], failurePatterns: library });
    const result = await runtime.run({ name: 'get_reservation_details', args: { reservation_id: 'HINTED' } });
    expect(result.status === 'failed' && result.error.suggestion).toBe('Ask the user for the six-letter code.');
  });

  it('bounds and redacts what a user template produces', async () => {
    const noisy = createFailurePatternLibrary([
      {
        id: 'noisy',
        signature: { code: 'NOT_FOUND' },
        rootCause: '',
        strategy: 'look-up-first',
        suggestionTemplate: `Mail sk-proj-${'a'.repeat(24)} ${'very long '.repeat(100)}`,
      },
    ]);
    const runtime = createToolRuntime({ tools: [lookup], failurePatterns: noisy });
    const result = await runtime.run({ name: 'get_reservation_details', args: { reservation_id: 'X' } });
    const suggestion = result.status === 'failed' ? result.error.suggestion : '';
    expect(suggestion.startsWith('Mail *** very long')).toBe(true);
    expect(Buffer.byteLength(suggestion)).toBeLessThanOrEqual(600);
    expect(suggestion.endsWith('… [truncated]')).toBe(true);
  });
});
