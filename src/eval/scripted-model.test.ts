/**
 * The scripted model decides from the text it reads: real SDK default texts and real toolrun
 * envelopes (from a real runtime), for the same failures.
 */
import { describe, expect, it } from 'vitest';
import { createToolRuntime } from '../core/create-tool-runtime.ts';
import { defineTool } from '../core/define-tool.ts';
import { formatToolResult } from '../core/format-tool-result.ts';
import { ToolError } from '../core/tool-error.ts';
import { createScriptedModel, decideAfterFailure, readsAsSuccess } from './scripted-model.ts';
import { sdkDefaultErrorText, sdkUnknownToolText } from './sdk-error-text.ts';
import type { EvalTask } from './eval-task.ts';

const reservationSchema = {
  type: 'object',
  properties: { reservation_id: { type: 'string', description: "The reservation id, such as '8JX2WO'." } },
  required: ['reservation_id'],
};

function runtime(retryOff = true) {
  const tools = [
    defineTool({ name: 'get_reservation_details_v2', description: 'Get a reservation.', inputSchema: reservationSchema, execute: async () => ({ ok: true }) }),
    defineTool({
      name: 'cancel_reservation',
      description: 'Cancel a reservation.',
      inputSchema: reservationSchema,
      execute: async () => {
        throw new ToolError({ kind: 'server', status: 503, message: 'service unavailable, try again later' });
      },
    }),
  ];
  return createToolRuntime({ tools, ...(retryOff ? { retry: { maxAttempts: 1 }, sessionBreaker: false as const } : {}) });
}

const offeredTools = ['get_reservation_details_v2', 'cancel_reservation'];
const intended = { name: 'get_reservation_details', args: { reservation_id: 'ZFA04Y' } };

describe('decideAfterFailure', () => {
  it('follows the tool a toolrun envelope suggests for a renamed tool; the AI SDK text lists every tool and suggests none', async () => {
    const envelope = formatToolResult(await runtime().run({ name: 'get_reservation_details', args: intended.args }));
    expect(decideAfterFailure(envelope, { calledName: 'get_reservation_details', sentArgs: intended.args, intended, offeredTools })).toEqual({
      action: 'follow',
      toolName: 'get_reservation_details_v2',
    });
    const aiSdk = sdkUnknownToolText('ai-sdk', 'get_reservation_details', offeredTools)!;
    expect(decideAfterFailure(aiSdk, { calledName: 'get_reservation_details', sentArgs: intended.args, intended, offeredTools })).toEqual({
      action: 'give_up',
    });
    expect(sdkUnknownToolText('openai-agents', 'get_reservation_details', offeredTools)).toBeUndefined();
  });

  it('fixes a misspelled key when the text names the key and what to send, not when it only says "not found"', async () => {
    const sentArgs = { reservationId: 'ZFA04Y' };
    const target = { name: 'get_reservation_details_v2', args: intended.args };
    const envelope = formatToolResult(await runtime().run({ name: 'get_reservation_details_v2', args: sentArgs }));
    expect(decideAfterFailure(envelope, { calledName: target.name, sentArgs, intended: target, offeredTools })).toEqual({ action: 'fix' });
    for (const sdk of ['ai-sdk', 'langchain'] as const) {
      const text = sdkDefaultErrorText(sdk, new ToolError({ kind: 'not_found', message: 'reservation not found' }));
      expect(decideAfterFailure(text, { calledName: target.name, sentArgs, intended: target, offeredTools })).toEqual({ action: 'give_up' });
    }
    // OpenAI Agents says "Please try again." for every failure: the model sends the same call again
    const agents = sdkDefaultErrorText('openai-agents', new Error('reservation not found'));
    expect(decideAfterFailure(agents, { calledName: target.name, sentArgs, intended: target, offeredTools })).toEqual({ action: 'retry' });
  });

  it('retries after a 503 whose text says to try again, and not when the text says not to call again', async () => {
    const context = { calledName: 'cancel_reservation', sentArgs: intended.args, intended: { name: 'cancel_reservation', args: intended.args }, offeredTools };
    const error = new ToolError({ kind: 'server', status: 503, message: 'service unavailable, try again later' });
    expect(decideAfterFailure(sdkDefaultErrorText('ai-sdk', error), context)).toEqual({ action: 'retry' });
    const envelope = formatToolResult(await runtime().run({ name: 'cancel_reservation', args: intended.args }));
    expect(envelope).toContain('Do not call it again now');
    expect(decideAfterFailure(envelope, context)).toEqual({ action: 'give_up' });
  });
});

describe('readsAsSuccess', () => {
  it('reads envelopes by status and plain texts by their words', async () => {
    expect(readsAsSuccess(formatToolResult(await runtime().run({ name: 'get_reservation_details_v2', args: intended.args })))).toBe(true);
    expect(readsAsSuccess(formatToolResult(await runtime().run({ name: 'cancel_reservation', args: intended.args })))).toBe(false);
    expect(readsAsSuccess('{"reservation_id":"ZFA04Y"}')).toBe(true);
    expect(readsAsSuccess('Transfer successful')).toBe(true);
    expect(readsAsSuccess('reservation not found')).toBe(false);
    expect(readsAsSuccess(sdkDefaultErrorText('openai-agents', new Error('x')))).toBe(false);
  });
});

describe('createScriptedModel', () => {
  const task: EvalTask = {
    id: 't0',
    system: 'policy',
    turns: [{ userMessage: 'cancel ZFA04Y', calls: [intended, { name: 'cancel_reservation', args: intended.args }], reply: 'Done.' }],
  };
  const tools = offeredTools.map((name) => ({ name, description: '', inputSchema: reservationSchema }));

  it('calls, follows the suggestion it read, moves on after a success and answers with the turn reply', async () => {
    const model = createScriptedModel(task);
    const signal = new AbortController().signal;
    const messages: Parameters<typeof model>[0]['messages'][number][] = [
      { role: 'system', content: 'policy' },
      { role: 'user', content: 'cancel ZFA04Y' },
    ];
    const rt = runtime();
    const answers: string[] = [];
    for (let step = 0; step < 6; step += 1) {
      const response = await model({ messages, tools, signal, stepIndex: step, runId: 'r' });
      const call = response.toolCalls?.[0];
      if (call === undefined) {
        answers.push(`text:${response.text}`);
        break;
      }
      answers.push(call.name);
      messages.push({ role: 'assistant', content: null, toolCalls: [call] });
      messages.push({ role: 'tool', content: formatToolResult(await rt.run({ name: call.name, args: call.args })), toolCallId: call.id });
    }
    // the rename is followed; the 503 says "do not call it again now", so the model gives up and answers
    expect(answers).toEqual(['get_reservation_details', 'get_reservation_details_v2', 'cancel_reservation', 'text:Done.']);
    // the same conversation always gets the same answer
    const again = await createScriptedModel(task)({ messages, tools, signal, stepIndex: 9, runId: 'r' });
    expect(again.text).toBe('Done.');
  });
});
