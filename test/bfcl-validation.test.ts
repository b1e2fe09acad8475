/**
 * BFCL (Berkeley Function Calling Leaderboard) schemas and ground-truth calls through the schema
 * layer: every schema loads after the dialect mapping (mismatched defaults and mixed enums are
 * reported, not fatal), the consistent ground-truth calls pass, and the seven calls whose answer
 * disagrees with its own schema fail naming the right field.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hasSharedData, readSharedJsonLines, sharedDataPath } from '../examples/shared-data.ts';
import type { CompiledToolSchema, ValidationResult } from '../src/ground/ports/schema-validator.ts';
import { createAjvSchemaValidator, mapBfclSchema } from '../src/schema/index.ts';

interface BfclFunction {
  name: string;
  parameters: unknown;
}
interface BfclQuestion {
  id: string;
  function: BfclFunction[];
}
interface BfclAnswer {
  id: string;
  ground_truth: Array<Record<string, Record<string, unknown[]>>>;
}

/** The seven known conflicts of the data README, with the code and the field path they must name. */
const KNOWN_CONFLICTS: Record<string, { code: string; path: string }> = {
  'live_simple_106-63-0': { code: 'MISSING_REQUIRED', path: '/auto_loan_payment_start' },
  'live_simple_112-68-0': { code: 'MISSING_REQUIRED', path: '/acc_routing_start' },
  simple_python_200: { code: 'MISSING_REQUIRED', path: '/fuel_efficiency' },
  'live_simple_71-35-0': { code: 'INVALID_ENUM', path: '/metrics' },
  'live_parallel_multiple_2-2-0': { code: 'INVALID_ENUM', path: '/command' },
  parallel_multiple_21: { code: 'INVALID_TYPE', path: '/x' },
  parallel_multiple_94: { code: 'INVALID_TYPE', path: '/elements/0' },
};

/** First acceptable value of each parameter; `""` first means "omitted"; nested objects use the same encoding. */
function firstAcceptableArguments(encoded: Record<string, unknown[]>): Record<string, unknown> {
  const decoded: Record<string, unknown> = {};
  for (const [name, acceptable] of Object.entries(encoded)) {
    const first = Array.isArray(acceptable) ? acceptable[0] : acceptable;
    if (first === '') continue;
    decoded[name] = decodeValue(first);
  }
  return decoded;
}

function decodeValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decodeValue);
  if (typeof value === 'object' && value !== null) return firstAcceptableArguments(value as Record<string, unknown[]>);
  return value;
}

interface CallOutcome {
  id: string;
  functionName: string;
  args: Record<string, unknown>;
  result: ValidationResult;
}

describe.skipIf(!hasSharedData('bfcl', 'data', 'possible_answer'))('BFCL schemas and ground-truth calls', () => {
  const dataFolder = sharedDataPath('bfcl', 'data');
  // collected even when skipped: without the data there is nothing to list (the suite is skipped, visibly)
  const questionFiles = dataFolder === undefined ? [] : readdirSync(dataFolder).filter((name) => name.startsWith('BFCL_') && name.endsWith('.json'));
  const validator = createAjvSchemaValidator();

  it('loads every schema after the dialect mapping and reports mismatched defaults and enums', () => {
    let functions = 0;
    const warnings: string[] = [];
    for (const file of questionFiles) {
      for (const question of readSharedJsonLines<BfclQuestion>('bfcl', 'data', file)) {
        for (const fn of question.function) {
          functions += 1;
          const mapping = mapBfclSchema(fn.parameters);
          warnings.push(...mapping.warnings.map((warning) => `${question.id} ${fn.name} ${warning}`));
          expect(() => validator.compile(mapping.schema, { coerce: 'none' })).not.toThrow();
        }
      }
    }
    const defaults = warnings.filter((warning) => warning.includes('default')).length;
    const enums = warnings.filter((warning) => warning.includes('enum mixes')).length;
    console.info(`[bfcl] ${functions} function schemas compiled; ${defaults} defaults mismatch their type, ${enums} enums mix types`);
    expect(functions).toBe(2048);
    expect(defaults).toBe(109);
    expect(enums).toBe(4);
  });

  it('passes the consistent ground-truth calls and fails the seven conflicts on the right field', async () => {
    const outcomes: CallOutcome[] = [];
    for (const file of questionFiles) {
      const questions = new Map(readSharedJsonLines<BfclQuestion>('bfcl', 'data', file).map((question) => [question.id, question]));
      for (const answer of readSharedJsonLines<BfclAnswer>('bfcl', 'data', 'possible_answer', file)) {
        const question = questions.get(answer.id);
        expect(question, answer.id).toBeDefined();
        const compiled = new Map<string, CompiledToolSchema>();
        for (const fn of question?.function ?? []) compiled.set(fn.name, validator.compile(mapBfclSchema(fn.parameters).schema, { coerce: 'none' }));
        for (const call of answer.ground_truth) {
          for (const [functionName, encoded] of Object.entries(call)) {
            const schema = compiled.get(functionName);
            expect(schema, `${answer.id}: ${functionName}`).toBeDefined();
            const args = firstAcceptableArguments(encoded);
            outcomes.push({ id: answer.id, functionName, args, result: await (schema as CompiledToolSchema).validate(args) });
          }
        }
      }
    }
    const failed = outcomes.filter((outcome) => !outcome.result.ok);
    console.info(`[bfcl] ${outcomes.length} ground-truth calls, ${outcomes.length - failed.length} pass, ${failed.length} fail`);
    for (const outcome of failed) {
      if (!outcome.result.ok)
        console.info(
          `  ${outcome.id} ${outcome.functionName}: ${outcome.result.code} ${outcome.result.fields.map((field) => field.path).join(', ')} — ${outcome.result.detail}`,
        );
    }
    expect(outcomes.length).toBe(2099);
    expect(outcomes.length - failed.length).toBe(2092);
    expect(failed.map((outcome) => outcome.id).sort()).toEqual(Object.keys(KNOWN_CONFLICTS).sort());
    for (const outcome of failed) {
      const expected = KNOWN_CONFLICTS[outcome.id];
      if (outcome.result.ok || expected === undefined) continue;
      expect(outcome.result.code, outcome.id).toBe(expected.code);
      expect(
        outcome.result.fields.map((field) => field.path),
        outcome.id,
      ).toContain(expected.path);
    }
  });
});
