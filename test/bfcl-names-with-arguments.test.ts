/**
 * Tool-name resolution with the call's arguments, on the BFCL catalogues (../shared/data/bfcl/):
 * every ground-truth call (its first acceptable value per parameter; omitted parameters left out)
 * gets its tool name misspelled (mulberry32, fixed seed) in the classes models produce — typos,
 * dropped or wrong namespaces, the name's words reordered, a word taken from another tool of the
 * catalogue (`circle.calculate_perimeter` for `circle.calculate_circumference`) — and is resolved
 * against its question's catalogue and against the whole file's catalogue, once with the arguments
 * and once without. Measured: top-1 (`match ?? closest` is the meant tool) with and without
 * arguments, and wrong auto-resolutions (a `match` naming another tool: the runtime would run it),
 * which must be 0 with the arguments.
 */
import { describe, expect, it } from 'vitest';
import { hasSharedData, readSharedJsonLines } from '../examples/shared-data.ts';
import { createToolNameResolver, type ToolNameEntry } from '../src/core/resolve-tool-name.ts';
import { createSeededRandom } from '../src/testing/seeded-random.ts';

const FILES = [
  'BFCL_v4_simple_python.json',
  'BFCL_v4_multiple.json',
  'BFCL_v4_parallel.json',
  'BFCL_v4_parallel_multiple.json',
  'BFCL_v4_live_simple.json',
  'BFCL_v4_live_parallel.json',
  'BFCL_v4_live_parallel_multiple.json',
];
const CLASSES = ['typo', 'transpose', 'dropped-namespace', 'wrong-namespace', 'reordered', 'crossed-word'] as const;
type MutationClass = (typeof CLASSES)[number];
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

interface BfclFunction {
  name: string;
  parameters?: { properties?: Record<string, unknown>; required?: string[] };
}
interface Question {
  id: string;
  function: BfclFunction[];
}
interface Answer {
  id: string;
  ground_truth: Array<Record<string, Record<string, unknown[]>>>;
}

function words(name: string): string[] {
  return name.split(/[._]+/).filter((word) => word !== '');
}

/** One misspelling of `name` in class `kind` (`undefined` when the class does not apply). */
function mutate(name: string, kind: MutationClass, catalogue: readonly string[], random: () => number): string | undefined {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const letters = [...name].flatMap((char, index) => (/[a-z]/i.test(char) ? [index] : []));
  switch (kind) {
    case 'typo': {
      if (letters.length < 4) return undefined;
      const index = pick(letters);
      return name.slice(0, index) + pick([...LETTERS].filter((letter) => letter !== name[index])) + name.slice(index + 1);
    }
    case 'transpose': {
      const pairs = letters.filter((index) => index + 1 < name.length && /[a-z]/i.test(name[index + 1]!) && name[index] !== name[index + 1]);
      if (pairs.length === 0) return undefined;
      const index = pick(pairs);
      return name.slice(0, index) + name[index + 1] + name[index] + name.slice(index + 2);
    }
    case 'dropped-namespace': {
      const dot = name.lastIndexOf('.');
      return dot > 0 ? name.slice(dot + 1) : undefined;
    }
    case 'wrong-namespace': {
      const dot = name.lastIndexOf('.');
      return dot > 0 ? `${pick(['utils', 'api', 'tools_lib', 'data'])}.${name.slice(dot + 1)}` : undefined;
    }
    case 'reordered': {
      const parts = name.split('.');
      if (parts.length >= 2) return [...parts].reverse().join('.');
      const underscored = name.split('_');
      return underscored.length >= 2 ? [...underscored].reverse().join('_') : undefined;
    }
    case 'crossed-word': {
      // one word of the name replaced by a word of another tool's name (of the same catalogue)
      const own = words(name);
      const others = catalogue.filter((other) => other !== name).flatMap(words);
      const foreign = [...new Set(others)].filter((word) => !own.includes(word) && word.length >= 4);
      if (own.length < 2 || foreign.length === 0) return undefined;
      const index = Math.floor(random() * own.length);
      const target = own[index]!;
      const replacement = pick(foreign);
      const at = name.lastIndexOf(target);
      return name.slice(0, at) + replacement + name.slice(at + target.length);
    }
  }
}

/** The first acceptable value of each parameter; parameters whose first value is `""` (may be omitted) left out. */
function firstValues(answer: Record<string, unknown[]>): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const [key, values] of Object.entries(answer)) {
    if (!Array.isArray(values) || values.length === 0 || values[0] === '') continue;
    args[key] = values[0];
  }
  return args;
}

interface Tally {
  total: number;
  withArgs: number;
  withoutArgs: number;
  wrongAutoWith: number;
  wrongAutoWithout: number;
  examples: string[];
}
const emptyTally = (): Tally => ({ total: 0, withArgs: 0, withoutArgs: 0, wrongAutoWith: 0, wrongAutoWithout: 0, examples: [] });

interface Call {
  name: string;
  args: Record<string, unknown>;
  catalogue: ToolNameEntry[];
}

function measure(calls: readonly Call[], seed: number): Record<MutationClass | 'overall', Tally> {
  const random = createSeededRandom(seed);
  const tallies = Object.fromEntries([...CLASSES, 'overall'].map((kind) => [kind, emptyTally()])) as Record<MutationClass | 'overall', Tally>;
  const resolvers = new Map<ToolNameEntry[], ReturnType<typeof createToolNameResolver>>();
  for (const call of calls) {
    let resolve = resolvers.get(call.catalogue);
    if (resolve === undefined) {
      resolve = createToolNameResolver(call.catalogue);
      resolvers.set(call.catalogue, resolve);
    }
    const names = call.catalogue.map((entry) => entry.name);
    for (const kind of CLASSES) {
      const requested = mutate(call.name, kind, names, random);
      if (requested === undefined || names.includes(requested)) continue;
      const withArgs = resolve(requested, call.args);
      const withoutArgs = resolve(requested);
      for (const tally of [tallies[kind], tallies.overall]) {
        tally.total += 1;
        if ((withArgs.match ?? withArgs.closest) === call.name) tally.withArgs += 1;
        if ((withoutArgs.match ?? withoutArgs.closest) === call.name) tally.withoutArgs += 1;
        if (withArgs.match !== undefined && withArgs.match !== call.name) {
          tally.wrongAutoWith += 1;
          if (tally.examples.length < 8) tally.examples.push(`${requested} → ${withArgs.match} (meant ${call.name})`);
        }
        if (withoutArgs.match !== undefined && withoutArgs.match !== call.name) tally.wrongAutoWithout += 1;
      }
    }
  }
  return tallies;
}

function report(title: string, tallies: Record<MutationClass | 'overall', Tally>): void {
  const percent = (part: number, whole: number) => (whole === 0 ? '  n/a' : `${((100 * part) / whole).toFixed(1).padStart(5)}%`);
  const rows = [...CLASSES, 'overall' as const].map((kind) => {
    const tally = tallies[kind];
    return `  | ${kind.padEnd(17)} | ${String(tally.total).padStart(5)} | ${percent(tally.withArgs, tally.total)} | ${percent(tally.withoutArgs, tally.total)} | ${String(tally.wrongAutoWith).padStart(3)} | ${String(tally.wrongAutoWithout).padStart(3)} |`;
  });
  const examples = tallies.overall.examples.map((example) => `  wrong: ${example}`);
  console.log(
    [title, '  | class             | calls | top-1 with args | top-1 without | wrong auto (with) | wrong auto (without) |', ...rows, ...examples].join('\n'),
  );
}

const hasBfcl = hasSharedData('bfcl', 'data', 'possible_answer', 'BFCL_v4_multiple.json');

describe.skipIf(!hasBfcl)('tool-name resolution with the ground-truth arguments (BFCL)', () => {
  const entryOf = (schema: BfclFunction): ToolNameEntry => ({
    name: schema.name,
    parameters: Object.keys(schema.parameters?.properties ?? {}),
    required: schema.parameters?.required ?? [],
  });
  const perQuestion: Call[] = [];
  const perFile: Call[] = [];
  for (const file of hasBfcl ? FILES : []) {
    const questions = readSharedJsonLines<Question>('bfcl', 'data', file);
    const answers = new Map(readSharedJsonLines<Answer>('bfcl', 'data', 'possible_answer', file).map((answer) => [answer.id, answer]));
    // a name declared by several questions with different schemas: its parameters merged (required: those all of them require)
    const merged = new Map<string, { parameters: Set<string>; required: string[] }>();
    for (const schema of questions.flatMap((question) => question.function)) {
      const entry = entryOf(schema);
      const known = merged.get(schema.name);
      if (known === undefined) merged.set(schema.name, { parameters: new Set(entry.parameters), required: [...(entry.required ?? [])] });
      else {
        for (const parameter of entry.parameters ?? []) known.parameters.add(parameter);
        known.required = known.required.filter((name) => entry.required?.includes(name));
      }
    }
    const fileCatalogue: ToolNameEntry[] = [...merged].map(([name, { parameters, required }]) => ({ name, parameters: [...parameters], required }));
    for (const question of questions) {
      const catalogue = question.function.map(entryOf);
      for (const call of answers.get(question.id)?.ground_truth ?? []) {
        for (const [name, answer] of Object.entries(call)) {
          const args = firstValues(answer);
          perQuestion.push({ name, args, catalogue });
          perFile.push({ name, args, catalogue: fileCatalogue });
        }
      }
    }
  }

  it('reads the 2,099 ground-truth calls', () => {
    expect(perQuestion).toHaveLength(2099);
  });

  it('per-question catalogues: the arguments never lower top-1, and no wrong auto-resolution', () => {
    const tallies = measure(perQuestion, 12);
    report('BFCL per-question catalogues, misspelled names with the ground-truth arguments:', tallies);
    expect(tallies.overall.total).toBeGreaterThan(5000);
    expect(tallies.overall.withArgs).toBeGreaterThanOrEqual(tallies.overall.withoutArgs);
    expect(tallies.overall.withArgs / tallies.overall.total).toBeGreaterThanOrEqual(0.95);
    expect(tallies.overall.wrongAutoWith).toBe(0);
  });

  it('whole-file catalogues (69 to 458 similar names): the arguments raise top-1, and no wrong auto-resolution', () => {
    const tallies = measure(perFile, 34);
    report('BFCL whole-file catalogues, misspelled names with the ground-truth arguments:', tallies);
    expect(tallies.overall.withArgs).toBeGreaterThan(tallies.overall.withoutArgs);
    expect(tallies['crossed-word'].withArgs).toBeGreaterThan(tallies['crossed-word'].withoutArgs);
    expect(tallies.reordered.withArgs / tallies.reordered.total).toBeGreaterThanOrEqual(0.9);
    expect(tallies.overall.wrongAutoWith).toBe(0);
  });
});
