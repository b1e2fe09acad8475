/**
 * Entries a host dead-lettered (an SDK's own loop, the MCP proxy, a durable engine), as the
 * dashboard and `toolrun dlq show` describe them: the replay plan says what a replay of that host
 * does, and a conversation in the host's own format reads as what it holds.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryStores, createRedactor, type ToolFailureEntry } from '../src/index.ts';
import { createDashboardApp } from '../src/dashboard/index.ts';
import { replayPlanOf } from '../src/cli/commands/dlq-command.ts';

const TOKEN = 'test-token-0123456789abcdef';

function hostEntry(host: string, runId: string, toolName: string, conversationRef: string): ToolFailureEntry {
  return {
    kind: 'tool',
    runId,
    stepIndex: 1,
    toolName,
    toolArgs: { amount: 5 },
    attempts: 3,
    lastError: { kind: 'server', status: 503, message: 'down' },
    conversationRef,
    tokensSpent: { input: 40, output: 2 },
    firstSeenAt: '2026-12-05T00:00:00.000Z',
    originalMessageId: `${host}:${runId}`,
    reason: 'retry-budget-exhausted',
  } as ToolFailureEntry;
}

describe('host entries in the dashboard and dlq show', () => {
  it('says what a replay of each host does, and that the host must be registered', () => {
    const sdk = replayPlanOf(hostEntry('openai-agents', 'run_a', 'charge_card', 'conv_a'));
    expect(sdk.action).toBe('re-execute-tool-call');
    expect(sdk.text).toMatch(/charge_card .*openai-agents's own loop, which calls the model only for the remaining steps/);
    expect(sdk.text).toContain('hosts.openai-agents');
    const mcp = replayPlanOf(hostEntry('mcp', 'run_b', 'book_flight', 'conv_b'));
    expect(mcp.text).toMatch(/re-issues the proxied call to book_flight upstream/);
    expect(mcp.text).toContain('no model is called');
    const engine = replayPlanOf(hostEntry('dbos', 'run_c', 'charge_card', 'conv_c'));
    expect(engine.action).toBe('resume-from-checkpoint');
    expect(engine.text).toMatch(/hands the run back to dbos/);
    // an entry of toolrun's own loop keeps its plan
    const own = replayPlanOf({ ...hostEntry('x', 'run_d', 'charge_card', 'conv_d'), originalMessageId: 'm1' });
    expect(own.text).toMatch(/then calls the model only for the remaining steps/);
    expect(own.text).not.toContain('hosts.');
  });

  it("shows an OpenAI Agents conversation's items by type, and content parts as JSON", async () => {
    const stores = createMemoryStores();
    await stores.conversations.put('conv_oa', [
      { role: 'user', content: 'Charge 5 to my card' },
      { type: 'function_call', name: 'charge_card', arguments: '{"amount":5}', callId: 'call_1' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_2', toolName: 'charge_card', input: { amount: 5 } }] },
    ]);
    await stores.toolDlq.push(hostEntry('openai-agents', 'run_oa', 'charge_card', 'conv_oa'));
    const [record] = await stores.toolDlq.list();
    const dashboard = createDashboardApp({ source: { stores, label: 'memory', redactor: createRedactor() }, token: TOKEN, sampleIntervalMs: 60_000 });
    try {
      const response = await dashboard.app.fetch(
        new Request(`http://127.0.0.1:4319/api/tool/entries/${encodeURIComponent(record!.id)}`, {
          headers: { host: '127.0.0.1:4319', authorization: `Bearer ${TOKEN}` },
        }),
      );
      expect(response.status).toBe(200);
      const detail = (await response.json()) as { replayPlan: string; conversation: { messages: Array<{ role: string; content: string | null }> } };
      expect(detail.replayPlan).toContain("openai-agents's own loop");
      const messages = detail.conversation.messages;
      expect(messages.map((message) => message.role)).toEqual(['user', 'function_call', 'assistant']);
      expect(messages[0]!.content).toBe('Charge 5 to my card');
      expect(JSON.parse(messages[1]!.content!)).toMatchObject({ type: 'function_call', name: 'charge_card', callId: 'call_1' });
      expect(JSON.parse(messages[2]!.content!)).toEqual([{ type: 'tool-call', toolCallId: 'call_2', toolName: 'charge_card', input: { amount: 5 } }]);
    } finally {
      await dashboard.close?.();
    }
  });
});
