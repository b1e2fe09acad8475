/**
 * `startMetricsServer`: the toolrun metrics in Prometheus text format on 127.0.0.1.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStores, createToolRuntime, defineTool, runAgent, ToolError } from '../src/index.ts';
import { createObservability, startMetricsServer, type MetricsServer } from '../src/observability/index.ts';
import { createScriptedModel } from '../src/testing/scripted-model.ts';
import { createFakeClock } from '../src/testing/fake-clock.ts';
import type { DeadLetterQueue } from '../src/ground/ports/stores.ts';

let servers: MetricsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
});

describe('startMetricsServer', () => {
  it('serves the tool and DLQ metrics in Prometheus text format on 127.0.0.1', async () => {
    const clock = createFakeClock(Date.UTC(2026, 0, 1));
    const stores = createMemoryStores({ clock });
    await (stores.toolDlq as DeadLetterQueue<unknown>).push({ runId: 'run_1' });
    await clock.advance(42_000);
    const server = await startMetricsServer({ port: 0, stores, clock });
    servers.push(server);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/metrics`);

    const tool = defineTool({
      name: 'get_user_details',
      description: 'Reads a user',
      inputSchema: { type: 'object', properties: { user_id: { type: 'string' } }, required: ['user_id'] },
      execute: ({ user_id }) => {
        if (user_id === 'ghost') throw new ToolError({ kind: 'not_found', message: 'user not found' });
        return { user_id };
      },
    });
    const runtime = createToolRuntime({ tools: [tool], clock, onCallEnd: server.metrics.onCallEnd });
    await runtime.run({ name: 'get_user_details', args: { user_id: 'mia_li_3668' } });
    await runtime.run({ name: 'get_user_details', args: { user_id: 'ghost' } });
    await runtime.run({ name: 'get_user_details', args: { user_id: 'ghost' } });

    const response = await fetch(server.url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const body = await response.text();
    const sample = (name: string, labels: Record<string, string>) =>
      body.split('\n').find((line) => line.startsWith(`${name}{`) && Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`)));
    expect(sample('toolrun_tool_calls_total', { gen_ai_tool_name: 'get_user_details', toolrun_status: 'success' })).toMatch(/ 1$/);
    expect(
      sample('toolrun_tool_calls_total', {
        gen_ai_tool_name: 'get_user_details',
        toolrun_status: 'failed',
        error_type: 'NOT_FOUND',
        toolrun_failure_type: 'logic',
      }),
    ).toMatch(/ 2$/);
    expect(sample('gen_ai_execute_tool_duration_seconds_count', { gen_ai_tool_name: 'get_user_details' })).toMatch(/ 1$/);
    expect(sample('toolrun_dlq_depth', { toolrun_dlq_queue: 'tool' })).toMatch(/ 1$/);
    expect(sample('toolrun_dlq_depth', { toolrun_dlq_queue: 'message' })).toMatch(/ 0$/);
    expect(sample('toolrun_dlq_oldest_age_seconds', { toolrun_dlq_queue: 'tool' })).toMatch(/ 42$/);
    expect(body).toContain('# TYPE toolrun_tool_calls_total counter');
    expect(body).toContain('# TYPE gen_ai_execute_tool_duration_seconds histogram');
    expect(body).toContain('# UNIT gen_ai_execute_tool_duration_seconds s');
    expect(body).toMatch(/^target_info\{[^}]*service_name="toolrun"/m);
    expect(body).not.toMatch(/^(gen_ai_execute_tool_duration|toolrun_dlq_oldest_age)[{ ]/m);

    expect((await fetch(`http://127.0.0.1:${server.port}/other`)).status).toBe(404);
  });

  it('feeds createObservability({ metrics }) in the same process: runs and recoveries appear once', async () => {
    const stores = createMemoryStores();
    const server = await startMetricsServer({ port: 0, stores });
    servers.push(server);
    const observability = createObservability({ metrics: server.metrics, logger: false, tracer: false, stores });
    let calls = 0;
    const flaky = defineTool({
      name: 'search_direct_flight',
      description: 'Searches',
      inputSchema: { type: 'object' },
      execute: () => {
        calls += 1;
        if (calls === 1) throw new ToolError({ kind: 'not_found', message: 'no such airport' });
        return [];
      },
    });
    const runtime = createToolRuntime({ tools: [flaky], onCallEnd: observability.onCallEnd });
    const call = (id: string) => ({ toolCalls: [{ id, name: 'search_direct_flight', args: '{}' }], usage: { input: 1, output: 1 } });
    await runAgent({
      model: createScriptedModel([call('a'), call('b'), { text: 'ok', usage: { input: 1, output: 1 } }]),
      runtime,
      messages: [{ role: 'user', content: 'x' }],
      hooks: observability.runHooks,
    });
    const body = await (await fetch(server.url)).text();
    expect(body).toMatch(/^toolrun_runs_total\{toolrun_run_status="completed",otel_scope_name="toolrun"\} 1$/m);
    expect(body).toMatch(/^toolrun_recovery_rounds_count\{gen_ai_tool_name="search_direct_flight",otel_scope_name="toolrun"\} 1$/m);
    expect(body.match(/^# TYPE toolrun_dlq_depth gauge$/gm)).toHaveLength(1);
  });

  it('closes (idempotently) and frees the port', async () => {
    const server = await startMetricsServer({ port: 0 });
    await Promise.all([server.close(), server.close()]);
    await expect(fetch(server.url)).rejects.toThrow();
  });

  it('rejects with the listen error when the port is taken', async () => {
    const first = await startMetricsServer({ port: 0 });
    servers.push(first);
    await expect(startMetricsServer({ port: first.port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});
