/**
 * The redaction canary (SPEC.md §3): a full handleMessage run whose arguments, tool errors and
 * conversation carry an e-mail address, an API key and a bearer token. Afterwards none of them is
 * in any log line, span (name, attribute, event, status), metric (name or label), DLQ entry,
 * failure-log record or model-facing envelope — while the tools themselves did receive them.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryStores, defineTool, handleMessage, ToolError, type ChatMessage, type MessageFailureEntry, type ToolFailureEntry } from '../src/index.ts';
import { createMemoryFailureLog, createObservability, readAllFailures } from '../src/observability/index.ts';
import { createAutoAdvancingClock } from '../src/testing/auto-advancing-clock.ts';
import { createScriptedModel } from '../src/testing/scripted-model.ts';
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
        throw new ToolError({ kind: 'server', status: 503, message: `mail relay refused ${String(args.to)} (Authorization: ${BEARER})`, cause: new Error(`relay key ${API_KEY}`) });
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
      const text = JSON.stringify({ name: span.name, attributes: span.attributes, events: span.events.map((event) => [event.name, event.attributes]), status: span.status });
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
    const seenByModel = model.requests.flatMap((request) => request.messages.filter((message) => message.role === 'tool').map((message) => message.content ?? ''));
    expect(leaks(seenByModel.join('\n'))).toEqual([]);
  });
});
