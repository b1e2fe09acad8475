/**
 * Tool-name resolution on real recorded model answers: the Berkeley Function Calling Leaderboard's
 * published results (github.com/HuanzhiMao/BFCL-Result, one folder per date, about 70 models), read
 * against the questions and schemas of `../shared/data/bfcl/`.
 *
 *   npx tsx bench/bfcl-recorded-names.ts <BFCL-Result date folder, e.g. ./BFCL-Result/2024-08-11>
 *
 * Every call a model made in the AST categories (simple, multiple, parallel, parallel multiple) goes
 * through `resolveToolName` with the question's tools and their schemas, as the runtime does:
 * - a **hallucinated call** names no offered tool and no equivalent spelling of one (the resolver
 *   gives no `match` without the arguments); its intended tool is known when the question's answer
 *   names one tool. Measured: top-1 (`closest` is that tool), split by whether the name carries a
 *   hint (without the arguments the resolver suggests something);
 * - a **wrong tool run**: a `match` (the runtime would run it) other than the equivalent spelling the
 *   name alone resolves to;
 * - **correct calls** (the score files list only failures: the result files hold every call; the
 *   answers of models that return JSON are read): their `match` must stay theirs.
 *
 * The results are not part of this repository (download the folder); the script only reads them.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { readSharedJsonLines } from '../examples/shared-data.ts';
import { resolveToolName, type ToolNameRegistry } from '../src/core/resolve-tool-name.ts';

interface BfclFunction {
  name: string;
  parameters?: Record<string, unknown>;
}
interface Question {
  id: string;
  function: BfclFunction[];
}
interface Answer {
  id: string;
  ground_truth: Array<Record<string, unknown>>;
}

/** BFCL-Result category (file stem) → the shared data file and its question id prefix. */
const CATEGORIES = [
  { score: 'simple', result: 'simple', file: 'BFCL_v4_simple_python.json', prefix: 'simple_python_' },
  { score: 'multiple_function', result: 'multiple_function', file: 'BFCL_v4_multiple.json', prefix: 'multiple_' },
  { score: 'parallel_function', result: 'parallel_function', file: 'BFCL_v4_parallel.json', prefix: 'parallel_' },
  { score: 'parallel_multiple_function', result: 'parallel_multiple_function', file: 'BFCL_v4_parallel_multiple.json', prefix: 'parallel_multiple_' },
] as const;

/** BFCL's type names as JSON Schema (`dict` → `object`, `float` → `number`, `tuple` → `array`, `any` → no type). */
function toJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'optional') continue;
    if (key === 'type' && typeof value === 'string') {
      const mapped = { dict: 'object', float: 'number', tuple: 'array', any: undefined }[value as 'dict'] ?? (value === 'any' ? undefined : value);
      if (mapped !== undefined) out.type = mapped;
      continue;
    }
    out[key] =
      key === 'properties' ? Object.fromEntries(Object.entries(value as object).map(([name, part]) => [name, toJsonSchema(part)])) : toJsonSchema(value);
  }
  return out;
}

function registryOf(functions: readonly BfclFunction[]): ToolNameRegistry {
  const byName = new Map(functions.map((fn) => [fn.name, { spec: { inputSchema: toJsonSchema(fn.parameters ?? {}) } }]));
  return { names: [...byName.keys()], get: (name) => byName.get(name) };
}

interface Call {
  model: string;
  question: string;
  name: string;
  args: unknown;
}

/** The calls of one decoded model answer (`[{ name: args }]`, args an object or its JSON text). */
function callsOf(decoded: unknown, model: string, question: string): Call[] {
  if (!Array.isArray(decoded)) return [];
  const calls: Call[] = [];
  for (const item of decoded) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) continue;
    for (const [name, raw] of Object.entries(item)) {
      let args: unknown = raw;
      if (typeof raw === 'string') {
        try {
          args = JSON.parse(raw);
        } catch {
          args = raw;
        }
      }
      calls.push({ model, question, name, args });
    }
  }
  return calls;
}

function readLines(path: string): unknown[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as unknown];
      } catch {
        return [];
      }
    });
}

export interface RecordedNamesReport {
  hallucinated: number;
  withHint: number;
  withHintCorrect: number;
  noHint: number;
  noHintCorrect: number;
  unknownIntent: number;
  wrongRuns: number;
  correctCalls: number;
  correctCallsChanged: number;
  misses: string[];
}

export function measureRecordedNames(folder: string): RecordedNamesReport {
  const report: RecordedNamesReport = {
    hallucinated: 0,
    withHint: 0,
    withHintCorrect: 0,
    noHint: 0,
    noHintCorrect: 0,
    unknownIntent: 0,
    wrongRuns: 0,
    correctCalls: 0,
    correctCallsChanged: 0,
    misses: [],
  };
  const models = readdirSync(join(folder, 'score')).sort();
  for (const category of CATEGORIES) {
    const questions = new Map(readSharedJsonLines<Question>('bfcl', 'data', category.file).map((question) => [question.id, question]));
    const answers = new Map(readSharedJsonLines<Answer>('bfcl', 'data', 'possible_answer', category.file).map((answer) => [answer.id, answer]));
    const registries = new Map<string, ToolNameRegistry>();
    const registryFor = (id: string) => {
      let registry = registries.get(id);
      if (registry === undefined) {
        registry = registryOf(questions.get(id)?.function ?? []);
        registries.set(id, registry);
      }
      return registry;
    };
    const questionId = (bfclId: string) => category.prefix + bfclId.slice(bfclId.lastIndexOf('_') + 1);
    for (const model of models) {
      const failed = new Set<string>();
      // the failures, with their decoded answers
      for (const entry of readLines(join(folder, 'score', model, `${category.score}_score.json`)).slice(1) as Array<Record<string, unknown>>) {
        const prompt = entry.prompt as { id?: string } | undefined;
        if (typeof prompt?.id !== 'string') continue;
        const id = questionId(prompt.id);
        failed.add(id);
        const registry = registryFor(id);
        const intended = new Set((answers.get(id)?.ground_truth ?? []).flatMap((call) => Object.keys(call)));
        for (const call of callsOf(entry.model_result_decoded, model, id)) {
          if (registry.get(call.name) !== undefined) continue;
          const withoutArgs = resolveToolName(call.name, undefined, registry);
          const resolution = resolveToolName(call.name, call.args, registry);
          // the arguments must never make a tool run that the name alone does not (an equivalent spelling runs the tool the model named)
          if (resolution.match !== undefined && resolution.match !== withoutArgs.match) report.wrongRuns += 1;
          if (withoutArgs.match !== undefined) continue; // an equivalent spelling, not a hallucination
          report.hallucinated += 1;
          if (intended.size !== 1) {
            report.unknownIntent += 1;
            continue;
          }
          const [target] = intended;
          const correct = (resolution.match ?? resolution.closest) === target;
          if (withoutArgs.closest !== undefined) {
            report.withHint += 1;
            if (correct) report.withHintCorrect += 1;
          } else {
            report.noHint += 1;
            if (correct) report.noHintCorrect += 1;
          }
          if (!correct)
            report.misses.push(`${model} ${id}: ${call.name}(${JSON.stringify(call.args).slice(0, 80)}) → ${resolution.closest ?? '(none)'}, meant ${target}`);
        }
      }
      // the correct answers: in the result file, not among the failures
      const resultFile = join(folder, 'result', model, `gorilla_openfunctions_v1_test_${category.result}_result.json`);
      for (const entry of readLines(resultFile) as Array<{ id?: string; result?: unknown }>) {
        if (typeof entry.id !== 'string') continue;
        const id = questionId(entry.id);
        if (failed.has(id)) continue;
        const registry = registryFor(id);
        const intended = new Set((answers.get(id)?.ground_truth ?? []).flatMap((call) => Object.keys(call)));
        for (const call of callsOf(entry.result, model, id)) {
          report.correctCalls += 1;
          if (registry.get(call.name) !== undefined) continue;
          const resolution = resolveToolName(call.name, call.args, registry);
          if (resolution.match === undefined || !intended.has(resolution.match)) report.correctCallsChanged += 1;
        }
      }
    }
  }
  return report;
}

if (process.argv[1]?.endsWith('bfcl-recorded-names.ts')) {
  const folder = process.argv[2];
  if (folder === undefined || !existsSync(join(folder, 'score'))) {
    console.error('usage: npx tsx bench/bfcl-recorded-names.ts <BFCL-Result date folder holding score/ and result/>');
    process.exit(2);
  }
  const report = measureRecordedNames(folder);
  const known = report.withHint + report.noHint;
  const percent = (part: number, whole: number) => (whole === 0 ? 'n/a' : `${((100 * part) / whole).toFixed(1)} %`);
  console.log(`hallucinated calls: ${report.hallucinated} (intended tool known: ${known}, unknown: ${report.unknownIntent})`);
  console.log(`  name carries a hint: ${report.withHintCorrect} / ${report.withHint} top-1 (${percent(report.withHintCorrect, report.withHint)})`);
  console.log(`  name carries none:   ${report.noHintCorrect} / ${report.noHint} top-1 (${percent(report.noHintCorrect, report.noHint)})`);
  console.log(
    `  all known:           ${report.withHintCorrect + report.noHintCorrect} / ${known} top-1 (${percent(report.withHintCorrect + report.noHintCorrect, known)})`,
  );
  console.log(`wrong tools run: ${report.wrongRuns}`);
  console.log(`correct calls: ${report.correctCalls}, resolved differently: ${report.correctCallsChanged}`);
  for (const miss of report.misses.slice(0, Number(process.env.MISSES ?? 30))) console.log(`  miss: ${miss}`);
}
