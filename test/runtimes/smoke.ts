/**
 * The root entry's smoke test, run as it is on every runtime CI covers (Node, Bun, Deno, and
 * workerd through `worker.ts`): define tools, make failing calls, print and check the envelopes.
 * Nothing here is Node-specific; `runSmoke` returns the checks instead of exiting, so that each
 * runtime's entry reports them its own way.
 */
import { createToolRuntime, defineTool, formatToolResult, ToolError, type ToolResult } from '../../src/index.ts';
import { canGenerateCode } from '../../src/schema/cfworker-schema-validator.ts';

/** One smoke run: every check with its verdict, the printed envelopes, and whether all passed. */
export interface SmokeReport {
  runtime: string;
  ok: boolean;
  /** `ajv` where code generation from strings is allowed, `cfworker` (the interpreter) where not. */
  jsonSchemaEngine: 'ajv' | 'cfworker';
  checks: Array<{ name: string; ok: boolean; got?: unknown }>;
  envelopes: string[];
}

export async function runSmoke(runtime: string): Promise<SmokeReport> {
  let bookings = 0;
  const bookFlight = defineTool({
    name: 'book_flight',
    description: 'Book a flight',
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['date', 'passengers'],
      properties: {
        date: { type: 'string', format: 'date' },
        passengers: { type: 'integer', minimum: 1, maximum: 9 },
        code: { type: 'string', pattern: '^[A-Z]{3}$' },
      },
    },
    execute() {
      bookings += 1;
      return { confirmation: 'ZFA04Y' };
    },
  });
  const getReservation = defineTool({
    name: 'get_reservation',
    description: 'Get a reservation',
    inputSchema: { type: 'object', required: ['reservation_id'], properties: { reservation_id: { type: 'string' } } },
    execute(args) {
      return Promise.reject(new ToolError({ kind: 'not_found', status: 404, message: `reservation ${String(args.reservation_id)} not found` }));
    },
  });
  const tools = createToolRuntime({ tools: [bookFlight, getReservation] });

  const wrongDate = await tools.run({ name: 'book_flight', args: '{"date":"2024/1/5","passengers":2}', sessionId: 'smoke' });
  const mixed = await tools.run({ name: 'book_flight', args: { date: '2024-01-15', passengers: '2', code: 'ab', pasengers: 1 }, sessionId: 'smoke' });
  const notFound = await tools.run({ name: 'get_reservation', args: { reservation_id: 'ZZZ999' }, sessionId: 'smoke' });
  const unknownTool = await tools.run({ name: 'book_flihgt', args: {}, sessionId: 'smoke' });
  const booked = await tools.run({ name: 'book_flight', args: { date: '2024-01-15', passengers: 2, code: 'LHR' }, sessionId: 'smoke' });

  const failure = (result: ToolResult) => (result.status === 'failed' ? result.error : undefined);
  const checks: SmokeReport['checks'] = [];
  const check = (name: string, ok: boolean, got?: unknown): void => {
    checks.push({ name, ok, ...(ok ? {} : { got }) });
  };
  check(
    'a wrong date is DATE_FORMAT_ERROR at /date',
    failure(wrongDate)?.code === 'DATE_FORMAT_ERROR' && failure(wrongDate)?.fields?.[0]?.path === '/date',
    failure(wrongDate),
  );
  check(
    'the date error gives an example',
    failure(wrongDate)?.detail === 'date: expected YYYY-MM-DD, e.g. 2024-01-15, received "2024/1/5"',
    failure(wrongDate)?.detail,
  );
  check(
    'mixed problems name every field, in order',
    failure(mixed)?.code === 'SCHEMA_VALIDATION_FAILED' &&
      JSON.stringify(failure(mixed)?.fields?.map((field) => field.path)) === JSON.stringify(['/pasengers', '/passengers', '/code']),
    failure(mixed),
  );
  check(
    'the unknown parameter names the closest one',
    failure(mixed)?.fields?.[0]?.message?.includes('did you mean "passengers"?') === true,
    failure(mixed)?.fields?.[0],
  );
  check('a tool that throws not_found is NOT_FOUND, not retried', failure(notFound)?.code === 'NOT_FOUND' && notFound.attempts === 1, notFound);
  check(
    'an unknown tool is TOOL_NOT_FOUND with the closest name',
    failure(unknownTool)?.code === 'TOOL_NOT_FOUND' && failure(unknownTool)?.closest_tool === 'book_flight',
    failure(unknownTool),
  );
  check('invalid arguments never reached the tool', bookings === 1, bookings);
  check('a valid call succeeds', booked.status === 'success', booked);
  check(
    'formatToolResult wraps the envelope',
    formatToolResult(wrongDate).startsWith('<tool_result tool="book_flight" status="failed">'),
    formatToolResult(wrongDate),
  );

  return {
    runtime,
    ok: checks.every((item) => item.ok),
    jsonSchemaEngine: canGenerateCode() ? 'ajv' : 'cfworker',
    checks,
    envelopes: [wrongDate, mixed, notFound, unknownTool].map((result) => formatToolResult(result)),
  };
}

/** The report as lines: a verdict per check, the envelopes, and a last line `smoke <runtime>: N passed, N failed`. */
export function formatSmokeReport(report: SmokeReport): string {
  const lines = [`smoke ${report.runtime}: JSON Schema engine ${report.jsonSchemaEngine}`];
  for (const envelope of report.envelopes) lines.push(envelope);
  for (const item of report.checks) lines.push(`${item.ok ? 'ok  ' : 'FAIL'} ${item.name}${item.ok ? '' : ` — got ${JSON.stringify(item.got)}`}`);
  const passed = report.checks.filter((item) => item.ok).length;
  lines.push(`smoke ${report.runtime}: ${passed} passed, ${report.checks.length - passed} failed`);
  return lines.join('\n');
}
