/**
 * Top-1 accuracy of the tool-name resolver on misspelled names drawn from the BFCL catalogues
 * (../shared/data/bfcl/). Misspellings are generated deterministically (mulberry32, fixed seed) in
 * the classes models really produce; a resolution is correct when `match ?? closest` is the
 * original name. A `match` that names another tool would make the runtime call the wrong tool, so
 * it is counted separately ("unsafe matches") and must stay at zero on the per-question catalogues.
 * The measured numbers are in docs/policies-notes.md.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hasSharedData, readSharedJsonLines, sharedDataPath } from '../examples/shared-data.ts';
import { createToolNameResolver } from '../src/core/resolve-tool-name.ts';
import { createSeededRandom } from '../src/testing/seeded-random.ts';

const MUTATION_CLASSES = [
  'case',
  'separator',
  'prefix',
  'typo-insert',
  'typo-delete',
  'typo-substitute',
  'typo-transpose',
  'dropped-namespace',
  'wrong-namespace',
] as const;
type MutationClass = (typeof MUTATION_CLASSES)[number];

const BFCL_FILES = [
  'BFCL_v4_simple_python.json',
  'BFCL_v4_multiple.json',
  'BFCL_v4_parallel.json',
  'BFCL_v4_parallel_multiple.json',
  'BFCL_v4_live_simple.json',
  'BFCL_v4_live_parallel.json',
  'BFCL_v4_live_parallel_multiple.json',
];

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const PREFIXES = ['functions.', 'default_api:', 'default_api.', 'tools.', 'mcp__bfcl__'];
const WRONG_NAMESPACES = ['utils', 'api', 'physics', 'geo', 'finance', 'tools_lib', 'data'];

/** One misspelling of `name` in class `kind`, or `undefined` when the class does not apply to it. */
function mutate(name: string, kind: MutationClass, random: () => number): string | undefined {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const letterPositions = [...name].flatMap((char, index) => (/[a-z]/i.test(char) ? [index] : []));
  const replaceAt = (index: number, text: string, length = 1) => name.slice(0, index) + text + name.slice(index + length);
  switch (kind) {
    case 'case': {
      const style = pick(['upper', 'title', 'flip-one'] as const);
      if (style === 'upper') return name.toUpperCase();
      if (style === 'title') return name.replace(/(^|[._-])([a-z])/g, (_all, separator: string, letter: string) => separator + letter.toUpperCase());
      const index = pick(letterPositions);
      const char = name.charAt(index);
      return replaceAt(index, char === char.toLowerCase() ? char.toUpperCase() : char.toLowerCase());
    }
    case 'separator':
      if (name.includes('.')) return name.replaceAll('.', '_');
      if (name.includes('_')) return name.replaceAll('_', pick(['-', '.']));
      if (/[a-z][A-Z]/.test(name)) return name.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();
      return undefined;
    case 'prefix':
      return pick(PREFIXES) + name;
    case 'typo-insert': {
      const index = Math.floor(random() * (name.length + 1));
      return replaceAt(index, pick([...LETTERS]), 0);
    }
    case 'typo-delete': {
      if (letterPositions.length < 3) return undefined;
      return replaceAt(pick(letterPositions), '');
    }
    case 'typo-substitute': {
      const index = pick(letterPositions);
      const char = name.charAt(index).toLowerCase();
      return replaceAt(index, pick([...LETTERS].filter((letter) => letter !== char)));
    }
    case 'typo-transpose': {
      const pairs = [...name].flatMap((char, index) => (index + 1 < name.length && char !== name.charAt(index + 1) ? [index] : []));
      if (pairs.length === 0) return undefined;
      const index = pick(pairs);
      return replaceAt(index, name.charAt(index + 1) + name.charAt(index), 2);
    }
    case 'dropped-namespace': {
      const dot = name.lastIndexOf('.');
      return dot > 0 ? name.slice(dot + 1) : undefined;
    }
    case 'wrong-namespace': {
      const dot = name.lastIndexOf('.');
      if (dot <= 0) return undefined;
      const namespace = name.slice(0, dot);
      return `${pick(WRONG_NAMESPACES.filter((candidate) => candidate !== namespace))}.${name.slice(dot + 1)}`;
    }
  }
}

interface Tally {
  total: number;
  correct: number;
  /** `match` given, but for another tool. */
  unsafeMatches: number;
  /** `match` given (for the right tool). */
  matches: number;
  /** The right name among the (up to 3) candidates. */
  inCandidates: number;
  /** Up to 5 unsafe matches, `requested → matched (meant)`, for the report. */
  unsafeExamples: string[];
}

interface Measurement {
  perClass: Record<MutationClass, Tally>;
  overall: Tally;
}

function emptyTally(): Tally {
  return { total: 0, correct: 0, unsafeMatches: 0, matches: 0, inCandidates: 0, unsafeExamples: [] };
}

/** Misspells every name of every catalogue once per class and resolves it against its catalogue. */
function measure(catalogues: ReadonlyArray<readonly string[]>, seed: number): Measurement {
  const random = createSeededRandom(seed);
  const perClass = Object.fromEntries(MUTATION_CLASSES.map((kind) => [kind, emptyTally()])) as Record<MutationClass, Tally>;
  const overall = emptyTally();
  for (const catalogue of catalogues) {
    const resolve = createToolNameResolver(catalogue);
    const names = new Set(catalogue);
    for (const name of names) {
      for (const kind of MUTATION_CLASSES) {
        const misspelled = mutate(name, kind, random);
        // a misspelling that is another tool's real name is not a TOOL_NOT_FOUND case
        if (misspelled === undefined || names.has(misspelled)) continue;
        const resolution = resolve(misspelled);
        const answer = resolution.match ?? resolution.closest;
        for (const tally of [perClass[kind], overall]) {
          tally.total += 1;
          if (answer === name) tally.correct += 1;
          if (resolution.candidates.includes(name)) tally.inCandidates += 1;
          if (resolution.match !== undefined) {
            if (resolution.match === name) tally.matches += 1;
            else {
              tally.unsafeMatches += 1;
              if (tally.unsafeExamples.length < 5) tally.unsafeExamples.push(`${misspelled} → ${resolution.match} (meant ${name})`);
            }
          }
        }
      }
    }
  }
  return { perClass, overall };
}

function accuracy(tally: Tally): number {
  return tally.total === 0 ? Number.NaN : tally.correct / tally.total;
}

function percent(part: number, whole: number): string {
  return whole === 0 ? '   n/a' : `${((100 * part) / whole).toFixed(1).padStart(5)}%`;
}

function report(title: string, measurement: Measurement): void {
  const rows = [...MUTATION_CLASSES.map((kind) => [kind, measurement.perClass[kind]] as const), ['overall', measurement.overall] as const];
  const lines = rows.map(
    ([label, tally]) =>
      `  | ${label.padEnd(17)} | ${String(tally.correct).padStart(5)} / ${String(tally.total).padEnd(5)} | ${percent(tally.correct, tally.total)} | ${percent(tally.inCandidates, tally.total)} | ${String(tally.matches).padStart(5)} | ${String(tally.unsafeMatches).padStart(3)} |`,
  );
  const header = '  | class             | top-1 correct | top-1  | top-3  | safe matches | unsafe matches |';
  const examples = measurement.overall.unsafeExamples.map((example) => `  unsafe: ${example}`);
  console.log([title, header, ...lines, ...examples].join('\n'));
}

interface BfclQuestion {
  id: string;
  function: Array<{ name: string }>;
}

const hasBfcl = hasSharedData('bfcl', 'data', 'BFCL_v4_multiple.json');

describe.skipIf(!hasBfcl)('tool-name resolution on the BFCL catalogues', () => {
  const questions = hasBfcl
    ? BFCL_FILES.flatMap((file) => readSharedJsonLines<BfclQuestion>('bfcl', 'data', file).map((question) => ({ file, question })))
    : [];
  const perQuestion = questions.map(({ question }) => question.function.map((schema) => schema.name));
  const multiTurnFolder = hasBfcl ? sharedDataPath('bfcl', 'data', 'multi_turn_func_doc') : undefined;
  const multiTurn = (
    multiTurnFolder === undefined
      ? []
      : readdirSync(multiTurnFolder)
          .filter((file) => file.endsWith('.json'))
          .sort()
  ).map((file) => readSharedJsonLines<{ name: string }>('bfcl', 'data', 'multi_turn_func_doc', file).map((schema) => schema.name));

  it('reads all 1,298 questions with 2,048 function names, and the 162 multi-turn tool docs', () => {
    expect(questions).toHaveLength(1298);
    expect(perQuestion.flat()).toHaveLength(2048);
    expect(multiTurn.flat()).toHaveLength(162);
  });

  it('per-question catalogues: ≥ 0.95 top-1 overall, every class ≥ 0.85, no unsafe match', () => {
    const measurement = measure(perQuestion, 20_240_601);
    report('BFCL per-question catalogues (the function list of each question):', measurement);
    expect(measurement.overall.total).toBeGreaterThan(12_000);
    expect(accuracy(measurement.overall)).toBeGreaterThanOrEqual(0.95);
    for (const kind of MUTATION_CLASSES) expect(accuracy(measurement.perClass[kind]), kind).toBeGreaterThanOrEqual(0.85);
    expect(measurement.overall.unsafeMatches).toBe(0);
  });

  it('per-question catalogues of two or more functions (where a wrong answer is possible): ≥ 0.9', () => {
    const measurement = measure(
      perQuestion.filter((catalogue) => catalogue.length > 1),
      7,
    );
    report('BFCL per-question catalogues with ≥ 2 functions:', measurement);
    expect(accuracy(measurement.overall)).toBeGreaterThanOrEqual(0.9);
    expect(measurement.overall.unsafeMatches).toBe(0);
  });

  it('one catalogue per BFCL file (69 to 458 similar names): ≥ 0.8 overall, and rare unsafe matches', () => {
    const perFile = BFCL_FILES.map((file) => [
      ...new Set(questions.filter((entry) => entry.file === file).flatMap((entry) => entry.question.function.map((schema) => schema.name))),
    ]);
    const measurement = measure(perFile, 42);
    report('BFCL whole-file catalogues (all functions of one file):', measurement);
    expect(accuracy(measurement.overall)).toBeGreaterThanOrEqual(0.8);
    expect(measurement.overall.unsafeMatches / measurement.overall.total).toBeLessThanOrEqual(0.01);
  });

  it('multi-turn tool docs, one catalogue per API (short names such as cd, cp, du): ≥ 0.8', () => {
    const measurement = measure(multiTurn, 99);
    report('BFCL multi-turn tool docs (one catalogue per API file):', measurement);
    expect(accuracy(measurement.overall)).toBeGreaterThanOrEqual(0.8);
    expect(measurement.overall.unsafeMatches).toBe(0);
  });
});
