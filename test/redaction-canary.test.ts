/**
 * The redaction canary (SPEC.md §3, §2.2): full handleMessage runs whose arguments, tool errors,
 * model errors and conversation carry secrets. Afterwards none of them is in any log line, span
 * (name, attribute, event, status), metric (name or label), DLQ entry, failure-log record, report,
 * run checkpoint or model-facing envelope — while the tools themselves did receive them. The first
 * test carries an e-mail address, an API key and a bearer token; the second suite one canary of
 * every secret family, and names the families each sink leaked.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createMemoryStores,
  defineTool,
  handleMessage,
  ToolError,
  type ChatMessage,
  type MessageFailureEntry,
  type Model,
  type ToolFailureEntry,
} from '../src/index.ts';
import { buildFailureReport, createMemoryFailureLog, createObservability, formatFailureReport, readAllFailures } from '../src/observability/index.ts';
import { runReportCommand } from '../src/observability/report/run-report-command.ts';
import { createAutoAdvancingClock } from '../src/testing/auto-advancing-clock.ts';
import { createScriptedModel } from '../src/testing/scripted-model.ts';
import { leakedCanaries, SECRET_CANARIES } from './observability-redaction-inputs.ts';
import { createTestTelemetry } from './observability-telemetry.ts';

const EMAIL = 'mia.li3818@example.com';
const API_KEY = 'sk-proj-Q7hT2xLm9Vw4Kp8Zr3Nb6Yc1';
const TOKEN = 'tok9f8e7d6c5b4a3210fedcbaZYX';
const BEARER = `Bearer ${TOKEN}`;
const CANARIES = [EMAIL, API_KEY, TOKEN];

function leaks(text: string): string[] {
  return CANARIES.filter((canary) => text.includes(canary));
}

describe('redaction canary', () => {
  it('no log line, span, metric, DLQ entry, failure record or envelope carries the e-mail, the API key or the token', async () => {
    const clock = createAutoAdvancingClock();
    const stores = createMemoryStores({ clock });
    const telemetry = createTestTelemetry({ level: 'debug' });
    const failureLog = createMemoryFailureLog();
    const observability = createObservability({
      logger: telemetry.logger,
      tracer: telemetry.tracer,
      meter: telemetry.meter,
      failureLog,
      stores,
      clock,
      captureArguments: true,
      captureResults: true,
    });
    const seenByTools: string[] = [];

    const lookupAccount = defineTool({
      name: 'lookup_account',
      description: 'Finds an account by e-mail',
      inputSchema: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] },
      execute: ({ email }) => {
        seenByTools.push(String(email));
        throw new Error(`account lookup for ${String(email)} crashed using ${API_KEY}`, { cause: new Error(`upstream said: ${BEARER} expired`) });
      },
    });
    const sendReceipt = defineTool({
      name: 'send_receipt',
      description: 'Sends a receipt',
      inputSchema: {
        type: 'object',
        properties: { to: { type: 'string' }, api_key: { type: 'string' }, note: { type: 'string' }, priority: { type: 'integer', minimum: 1, maximum: 5 } },
        required: ['to', 'priority'],
      },
      idempotent: true,
      execute: (args) => {
        seenByTools.push(JSON.stringify(args));
        throw new ToolError({
          kind: 'server',
          status: 503,
          message: `mail relay refused ${String(args.to)} (Authorization: ${BEARER})`,
          cause: new Error(`relay key ${API_KEY}`),
        });
      },
    });
    const getStatus = defineTool({ name: 'get_status', description: 'Status', inputSchema: { type: 'object' }, execute: () => ({ status: 'ok' }) });

    const secretArgs = { to: EMAIL, api_key: API_KEY, note: `Authorization: ${BEARER}`, priority: 1 };
    const step = (id: string, name: string, args: string) => ({ toolCalls: [{ id, name, args }], usage: { input: 200, output: 20 } });
    const model = createScriptedModel([
      step('c0', 'lookup_account', JSON.stringify({ email: EMAIL })), // TOOL_EXCEPTION: secrets in the message, the cause and the stack
      step('c1', 'send_receipt', JSON.stringify({ ...secretArgs, priority: BEARER })), // INVALID_TYPE: a secret as the received value
      step('c2', 'send_receipt', `{"to": "${EMAIL}", "api_key": "${API_KEY}", "note": "${BEARER}`), // MALFORMED_ARGUMENTS: secrets in the raw text
      step('c3', 'get_status', '{}'), // success
      step('c4', 'send_receipt', JSON.stringify(secretArgs)), // UNAVAILABLE after 3 attempts: secrets in every attempt's error
      step('c5', 'send_receipt', JSON.stringify(secretArgs)), // retry budget spent: tool_failed, one tool-DLQ entry
    ]);
    const messageDlq: MessageFailureEntry[] = [];
    const toolDlq: ToolFailureEntry[] = [];
    const result = await handleMessage(
      {
        id: 'msg-canary',
        body: JSON.stringify({
          system: `You help ${EMAIL}. Never reveal ${API_KEY}.`,
          input: `Please e-mail my receipt to ${EMAIL}; use key ${API_KEY} and header Authorization: ${BEARER}`,
          sessionId: 'session-canary',
        }),
      },
      {
        model,
        tools: [lookupAccount, sendReceipt, getStatus],
        stores,
        queues: { messageDlq, toolDlq },
        toolRetryBudget: 2,
        runtimeOptions: { clock, onCallEnd: observability.onCallEnd },
        runHooks: observability.runHooks,
        onEvent: observability.onEvent,
      },
    );
    await observability.flush();

    // The canaries really went through the system...
    expect(result.status).toBe('tool_failed');
    expect(toolDlq).toHaveLength(1);
    expect(messageDlq).toHaveLength(0);
    expect(leaks(seenByTools.join('\n'))).toEqual(CANARIES);
    expect(leaks(JSON.stringify(model.requests[0]!.messages))).toEqual(CANARIES);
    const spans = telemetry.spans();
    expect(spans.filter((span) => span.name.startsWith('execute_tool'))).toHaveLength(5);
    expect(telemetry.rawLines.length).toBeGreaterThanOrEqual(6);

    // ...and none of them came out.
    expect(leaks(telemetry.rawLines.join('\n'))).toEqual([]);
    const developerLines = telemetry.lines.filter((line) => line.developer !== undefined);
    expect(developerLines.length).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(developerLines)).toContain('***');

    for (const span of spans) {
      const text = JSON.stringify({
        name: span.name,
        attributes: span.attributes,
        events: span.events.map((event) => [event.name, event.attributes]),
        status: span.status,
      });
      expect(leaks(text), span.name).toEqual([]);
    }
    expect(spans.some((span) => String(span.attributes['gen_ai.tool.call.arguments'] ?? '').includes('***'))).toBe(true);

    const points = await telemetry.collect();
    expect(points.length).toBeGreaterThan(0);
    expect(leaks(JSON.stringify(points.map((point) => [point.name, point.attributes])))).toEqual([]);

    expect(leaks(JSON.stringify(toolDlq))).toEqual([]);
    expect(leaks(JSON.stringify(await stores.toolDlq.list()))).toEqual([]);
    expect(leaks(JSON.stringify(await readAllFailures(failureLog)))).toEqual([]);

    const conversation = (await stores.conversations.get(toolDlq[0]!.conversationRef)) as ChatMessage[];
    const envelopes = conversation.filter((message) => message.role === 'tool').map((message) => message.content ?? '');
    expect(envelopes).toHaveLength(5);
    for (const envelope of envelopes) expect(leaks(envelope), envelope).toEqual([]);
    const seenByModel = model.requests.flatMap((request) =>
      request.messages.filter((message) => message.role === 'tool').map((message) => message.content ?? ''),
    );
    expect(leaks(seenByModel.join('\n'))).toEqual([]);
  });
});

/**
 * Every secret family (test/observability-redaction-inputs.ts: one canary per family) through every
 * sink. One scenario runs the canaries through tool arguments (values, sensitive keys, a secret as a
 * property name), tool error texts and causes, wrong argument values, malformed arguments, invented
 * tool names, a tool's success data and a failing model; each sink is then checked in its own test,
 * which names the families that leaked into it.
 */
describe('redaction canary: every secret family through every sink', () => {
  const canaries = SECRET_CANARIES;
  const carriers = canaries.map((canary) => canary.carrier);
  const allCarriers = carriers.join(' | ');
  /** Each canary's value object, with keys made unique (several canaries use `note` or `header`). */
  const secretArgs: Record<string, unknown> = {};
  canaries.forEach((canary, index) => {
    for (const [key, value] of Object.entries(canary.value)) secretArgs[key === 'note' || key === 'header' ? `${key}_${index}` : key] = value;
  });

  type Scenario = {
    telemetry: ReturnType<typeof createTestTelemetry>;
    failureLog: ReturnType<typeof createMemoryFailureLog>;
    stores: ReturnType<typeof createMemoryStores>;
    toolDlq: ToolFailureEntry[];
    messageDlq: MessageFailureEntry[];
    seenByTools: string[];
    model: ReturnType<typeof createScriptedModel>;
    toolRun: Awaited<ReturnType<typeof handleMessage>>;
    modelRun: Awaited<ReturnType<typeof handleMessage>>;
    echoCallIds: string[];
    conversationRef: string;
  };
  let scenario: Scenario;

  /** Families leaked into `text`, for the sink named `sink` (empty when none). */
  const leaksIn = (sink: string, text: string) => {
    const families = leakedCanaries(text);
    return families.length === 0 ? {} : { [sink]: families };
  };

  beforeAll(async () => {
    const clock = createAutoAdvancingClock();
    const stores = createMemoryStores({ clock });
    const telemetry = createTestTelemetry({ level: 'debug' });
    const failureLog = createMemoryFailureLog();
    const observability = createObservability({
      logger: telemetry.logger,
      tracer: telemetry.tracer,
      meter: telemetry.meter,
      failureLog,
      stores,
      clock,
      captureArguments: true,
      captureResults: true,
    });
    const seenByTools: string[] = [];

    const probeAccount = defineTool({
      name: 'probe_account',
      description: 'Probes an account',
      inputSchema: { type: 'object', properties: { carrier: { type: 'string' } }, required: ['carrier'] },
      execute: ({ carrier }) => {
        seenByTools.push(String(carrier));
        throw new Error(`account probe crashed for ${String(carrier)}`, { cause: new Error(`upstream said: ${String(carrier)}`) });
      },
    });
    const sendReceipt = defineTool({
      name: 'send_receipt',
      description: 'Sends a receipt',
      inputSchema: {
        type: 'object',
        properties: { priority: { type: 'integer', minimum: 1, maximum: 5 } },
        required: ['priority'],
        additionalProperties: false,
      },
      execute: () => ({ sent: true }),
    });
    const deliver = defineTool({
      name: 'deliver',
      description: 'Delivers a parcel',
      inputSchema: { type: 'object' },
      idempotent: true,
      sensitive: ['courier_pin'],
      execute: (args) => {
        seenByTools.push(JSON.stringify(args));
        throw new ToolError({ kind: 'server', status: 503, message: `relay refused: ${allCarriers}`, cause: new Error(`relay said: ${allCarriers}`) });
      },
    });
    const echoStatus = defineTool({
      name: 'echo_status',
      description: 'Status',
      inputSchema: { type: 'object' },
      execute: () => ({ status: 'ok', echo: allCarriers }),
    });

    // One step per canary: a tool error text, a wrong value with the carrier (and the canary's
    // value object as unknown properties), an invented tool name; then malformed arguments, a
    // success whose data holds every carrier, and a tool that fails until the retry budget is spent.
    const echoCallIds: string[] = [];
    const steps = canaries.map((canary, index) => ({
      toolCalls: [
        { id: `p${index}`, name: 'probe_account', args: JSON.stringify({ carrier: canary.carrier }) },
        { id: `s${index}`, name: 'send_receipt', args: JSON.stringify({ priority: canary.carrier, ...canary.value }) },
        { id: `h${index}`, name: `lookup ${canary.carrier}`, args: '{}' },
      ],
      usage: { input: 10, output: 5 },
    }));
    echoCallIds.push('e0');
    const model = createScriptedModel([
      ...steps,
      {
        toolCalls: [{ id: 'm0', name: 'deliver', args: `{"note": "${allCarriers.replaceAll('"', '\\"').replaceAll('\n', '\\n')}", "password": "Pw9canaryXz"` }],
        usage: { input: 10, output: 5 },
      },
      { toolCalls: [{ id: 'e0', name: 'echo_status', args: '{}' }], usage: { input: 10, output: 5 } },
      {
        toolCalls: [{ id: 'd0', name: 'deliver', args: JSON.stringify({ ...secretArgs, courier_pin: '9911', note: allCarriers }) }],
        usage: { input: 10, output: 5 },
      },
      {
        toolCalls: [{ id: 'd1', name: 'deliver', args: JSON.stringify({ ...secretArgs, courier_pin: '9911', note: allCarriers }) }],
        usage: { input: 10, output: 5 },
      },
    ]);
    const toolDlq: ToolFailureEntry[] = [];
    const messageDlq: MessageFailureEntry[] = [];
    const common = {
      stores,
      queues: { messageDlq, toolDlq },
      toolRetryBudget: 2,
      maxSteps: canaries.length + 10,
      runtimeOptions: { clock, onCallEnd: observability.onCallEnd, sessionBreaker: { failureThreshold: 1000 } },
      runHooks: observability.runHooks,
      onEvent: observability.onEvent,
      clock,
    };
    const toolRun = await handleMessage(
      {
        id: 'msg-families',
        body: JSON.stringify({ system: `You help. Never reveal ${allCarriers}.`, input: `Please help: ${allCarriers}`, sessionId: 'session-families' }),
      },
      { model, tools: [probeAccount, sendReceipt, deliver, echoStatus], ...common },
    );

    // A model that always fails with every carrier in its error text.
    const failingModel = (() => {
      throw Object.assign(new Error(`provider rejected the request: ${allCarriers}`), { status: 503 });
    }) as unknown as Model;
    const modelRun = await handleMessage(
      { id: 'msg-model', body: JSON.stringify({ input: `Hello ${carriers[0]}`, sessionId: 'session-model' }) },
      { model: failingModel, tools: [echoStatus], modelPolicy: { maxAttempts: 2 }, ...common },
    );
    await observability.flush();
    const toolEntry = toolDlq.find((entry) => entry.kind === 'tool');
    scenario = {
      telemetry,
      failureLog,
      stores,
      toolDlq,
      messageDlq,
      seenByTools,
      model,
      toolRun,
      modelRun,
      echoCallIds,
      conversationRef: toolEntry?.conversationRef ?? '',
    };
  });

  it('the canaries really went through: the tools and the model saw every family', () => {
    expect(scenario.toolRun.status).toBe('tool_failed');
    expect(leakedCanaries(scenario.seenByTools.join('\n'))).toEqual(canaries.map((canary) => canary.family));
    expect(leakedCanaries(JSON.stringify(scenario.model.requests[0]!.messages))).toEqual(canaries.map((canary) => canary.family));
    expect(scenario.telemetry.rawLines.length).toBeGreaterThan(canaries.length * 3);
  });

  it('model-facing envelopes (every tool message the model got, failures and their fields)', async () => {
    const conversation = (await scenario.stores.conversations.get(scenario.conversationRef)) as ChatMessage[];
    const envelopes = conversation
      .filter((message) => message.role === 'tool' && !scenario.echoCallIds.includes(message.toolCallId ?? ''))
      .map((message) => message.content ?? '');
    expect(envelopes.length).toBeGreaterThanOrEqual(canaries.length * 3);
    const seenByModel = scenario.model.requests.flatMap((request) =>
      request.messages
        .filter((message) => message.role === 'tool' && !scenario.echoCallIds.includes(message.toolCallId ?? ''))
        .map((message) => message.content ?? ''),
    );
    expect({ ...leaksIn('stored envelopes', envelopes.join('\n')), ...leaksIn('envelopes sent to the model', seenByModel.join('\n')) }).toEqual({});
  });

  it('pino log lines (params, messages, fields, developer record: message, stack, causes)', () => {
    const developer = scenario.telemetry.lines.filter((line) => line.developer !== undefined);
    expect(developer.length).toBeGreaterThanOrEqual(canaries.length);
    expect(leaksIn('pino', scenario.telemetry.rawLines.join('\n'))).toEqual({});
  });

  it('spans (names, attributes, captured arguments and results, events, status)', () => {
    const spans = scenario.telemetry.spans();
    expect(spans.length).toBeGreaterThan(canaries.length * 3);
    const text = JSON.stringify(
      spans.map((span) => ({
        name: span.name,
        attributes: span.attributes,
        events: span.events.map((event) => [event.name, event.attributes]),
        status: span.status,
      })),
    );
    expect(leaksIn('spans', text)).toEqual({});
  });

  it('metrics (names and labels)', async () => {
    const points = await scenario.telemetry.collect();
    expect(points.length).toBeGreaterThan(0);
    expect(leaksIn('metrics', JSON.stringify(points.map((point) => [point.name, point.attributes])))).toEqual({});
  });

  it('tool-DLQ entries (toolArgs, lastError, toolName), as pushed and as stored', async () => {
    const toolEntries = scenario.toolDlq.filter((entry) => entry.kind === 'tool');
    expect(toolEntries).toHaveLength(1);
    expect(JSON.stringify(toolEntries[0]!.toolArgs)).toContain('***');
    expect({
      ...leaksIn('tool DLQ (pushed)', JSON.stringify(scenario.toolDlq)),
      ...leaksIn('tool DLQ (stored)', JSON.stringify(await scenario.stores.toolDlq.list())),
    }).toEqual({});
  });

  it('the failure log', async () => {
    const records = await readAllFailures(scenario.failureLog);
    expect(records.filter((record) => record.kind === 'tool-failure').length).toBeGreaterThanOrEqual(canaries.length * 3);
    expect(leaksIn('failure log', JSON.stringify(records))).toEqual({});
  });

  it('toolrun report: from the failure log, from the pino log file, and from records written unredacted', async () => {
    const records = await readAllFailures(scenario.failureLog);
    const fromStore = buildFailureReport(records, { source: 'memory' });
    const directory = mkdtempSync(join(tmpdir(), 'toolrun-canary-'));
    const logFile = join(directory, 'toolrun.log');
    writeFileSync(logFile, `${scenario.telemetry.rawLines.join('\n')}\n`);
    let printed = '';
    const fromLog = await runReportCommand({ fromLog: logFile, write: (text) => (printed += text), writeError: () => {} });
    let printedJson = '';
    await runReportCommand({ fromLog: logFile, json: true, write: (text) => (printedJson += text), writeError: () => {} });
    rmSync(directory, { recursive: true, force: true });
    expect(fromLog.exitCode).toBe(0);
    expect(fromStore.totals.failures).toBeGreaterThanOrEqual(canaries.length * 3);
    // Records from elsewhere (an older version, another writer) hold the secrets in clear.
    const unredacted = canaries.map((canary, index) => ({
      kind: 'tool-failure' as const,
      at: '2024-05-15T15:00:00.000Z',
      toolName: index % 2 === 0 ? 'probe_account' : `lookup ${canary.carrier}`,
      runId: `run ${canary.carrier}`,
      sessionId: canary.carrier,
      traceId: 't',
      callId: canary.carrier,
      stepIndex: 0,
      type: 'invalid_parameter' as const,
      code: 'INVALID_TYPE',
      message: `priority is wrong: ${canary.carrier}`,
      fields: [{ path: `/${canary.carrier}`, problem: 'type', expected: canary.carrier, received: canary.carrier }],
      attempts: 1,
      durationMs: 1,
    }));
    const fromUnredacted = buildFailureReport(unredacted, { source: 'old' });
    expect({
      ...leaksIn('report from the failure log (JSON)', JSON.stringify(fromStore)),
      ...leaksIn('report from the failure log (text)', formatFailureReport(fromStore)),
      ...leaksIn('report from the log file (text)', printed),
      ...leaksIn('report from the log file (JSON)', printedJson),
      ...leaksIn('report from unredacted records (JSON)', JSON.stringify(fromUnredacted)),
      ...leaksIn('report from unredacted records (text)', formatFailureReport(fromUnredacted, { topFields: 100 })),
    }).toEqual({});
  });

  it('model failure: the tool-DLQ entry (kind model) and the logs', async () => {
    expect(scenario.modelRun.status).not.toBe('completed');
    const modelEntries = scenario.toolDlq.filter((entry) => (entry as { kind: string }).kind === 'model');
    expect(modelEntries).toHaveLength(1);
    expect(leaksIn('model-failure entry', JSON.stringify(modelEntries))).toEqual({});
  });

  it('run checkpoints: stores.runs data (tool and model error texts, budgets) [lead: run records]', async () => {
    const runs = await Promise.all(
      [scenario.toolRun.runId, scenario.modelRun.runId].map(async (runId) => (runId === null ? undefined : scenario.stores.runs.get(runId))),
    );
    expect(runs.filter(Boolean)).toHaveLength(2);
    expect({ ...leaksIn('run checkpoint (tool run)', JSON.stringify(runs[0])), ...leaksIn('run checkpoint (model run)', JSON.stringify(runs[1])) }).toEqual({});
  });

  it('message DLQ: reason.detail and fields[].received (rawBody keeps the body by design) [lead: message DLQ]', async () => {
    const messageDlq: MessageFailureEntry[] = [];
    const context = {
      model: createScriptedModel([{ text: 'unused', usage: { input: 1, output: 1 } }]),
      tools: [],
      queues: { messageDlq, toolDlq: [] as ToolFailureEntry[] },
      stores: createMemoryStores(),
    };
    // Wrong values (at most 20 fields are kept: two bodies), a secret as a property name, malformed JSON.
    const half = Math.ceil(canaries.length / 2);
    for (const part of [canaries.slice(0, half), canaries.slice(half)]) {
      const body = {
        messages: part.map((canary) => ({ role: canary.carrier, content: 'x' })),
        runId: part.map((canary) => canary.carrier).join(' '),
        'sk-proj-Prop4canaryName0123456789': 1,
      };
      await handleMessage({ id: `bad-${part[0]!.family}`, body: JSON.stringify(body) }, context);
    }
    for (const canary of canaries) await handleMessage({ id: `malformed-${canary.family}`, body: `{"input": ${canary.carrier}` }, context);
    expect(messageDlq).toHaveLength(2 + canaries.length);
    const withoutRawBody = messageDlq.map(({ rawBody: _rawBody, ...rest }) => rest);
    const detail = withoutRawBody.map((entry) => entry.reason.detail).join('\n');
    const received = withoutRawBody
      .flatMap((entry) => (entry.reason.fields ?? []).map((field) => `${field.path} ${field.received ?? ''} ${field.expected ?? ''}`))
      .join('\n');
    expect({
      ...leaksIn('message DLQ reason.detail', detail),
      ...leaksIn('message DLQ fields (path, received, expected)', received),
      ...leaksIn('message DLQ entry (all but rawBody)', JSON.stringify(withoutRawBody)),
    }).toEqual({});
    // The raw body is kept as received, and the entry says so.
    expect(messageDlq.every((entry) => entry.rawBodyRedacted === false)).toBe(true);
  });
});
