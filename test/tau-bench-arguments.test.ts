/**
 * τ-bench airline: every tool call gpt-4o really made (1,164, arguments as the raw JSON string the
 * model produced) parses and passes its tool's schema.
 */
import { describe, expect, it } from 'vitest';
import { hasSharedData, readSharedJson, readSharedJsonLines } from '../examples/shared-data.ts';
import type { CompiledToolSchema } from '../src/ground/ports/schema-validator.ts';
import { createAjvSchemaValidator, parseArguments } from '../src/schema/index.ts';

interface OpenAiTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}
interface RecordedTrial {
  task_id: number;
  calls: Array<{ id: string; name: string; arguments: string }>;
}

describe.skipIf(!hasSharedData('tau-bench', 'gpt-4o-airline.tool_calls.jsonl'))('τ-bench airline tool calls', () => {
  it('parses every recorded call and validates it against its tool schema', async () => {
    const tools = readSharedJson<OpenAiTool[]>('tau-bench', 'tools.airline.json');
    const validator = createAjvSchemaValidator();
    const schemas = new Map<string, CompiledToolSchema>(
      tools.map((tool) => [tool.function.name, validator.compile(tool.function.parameters, { coerce: 'none' })]),
    );
    const trials = readSharedJsonLines<RecordedTrial>('tau-bench', 'gpt-4o-airline.tool_calls.jsonl');
    const problems: string[] = [];
    const normalisations: string[] = [];
    let calls = 0;
    for (const trial of trials) {
      for (const call of trial.calls) {
        calls += 1;
        const parsed = parseArguments(call.arguments);
        if (!parsed.ok) {
          problems.push(`${trial.task_id} ${call.name}: ${parsed.failure.message}`);
          continue;
        }
        normalisations.push(...parsed.normalisations);
        const schema = schemas.get(call.name);
        if (schema === undefined) {
          problems.push(`${trial.task_id} ${call.name}: no such tool`);
          continue;
        }
        const result = await schema.validate(parsed.value);
        if (!result.ok) problems.push(`${trial.task_id} ${call.name}: ${result.code} ${result.detail}`);
        else normalisations.push(...result.normalisations);
      }
    }
    console.info(
      `[tau-bench] ${calls} calls over ${schemas.size} tools: ${calls - problems.length} pass, ${problems.length} fail, ${normalisations.length} normalisations`,
    );
    expect(calls).toBe(1164);
    expect(schemas.size).toBe(14);
    expect(problems).toEqual([]);
  });
});
