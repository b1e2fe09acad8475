/**
 * `npm run bench`: every benchmark of the project, each reported as ratios against a baseline
 * measured in the same run. Speed is measured here, never asserted in unit tests.
 * `npm run bench -- NAME` runs one (runtime, worker, observability, redaction, distributed, airline, mcp,
 * hosts, openai-agents-dlq, anthropic-dlq, langchain, langchain-dlq, dashboard, ai-sdk, postgres-steps, dbos, scale, scale-report, scale-drain); each bench
 * module is loaded only when it runs, so one that reads the compiled package (`dist/`, built by
 * `npm run bench`) does not stop the others from running from source.
 */
import { printTable } from './measure.ts';

const only = process.argv[2];

if (!only || only === 'runtime') printTable('Tool runtime: success and failure path', await (await import('./runtime.bench.ts')).runRuntimeBench());
if (!only || only === 'worker') printTable('SQLite worker and tool-DLQ entry size', await (await import('./worker.bench.ts')).runWorkerBench());
if (!only || only === 'observability') printTable('Observability: success-path cost', await (await import('./observability.bench.ts')).runObservabilityBench());
if (!only || only === 'redaction')
  printTable('Redaction: 1 MB of adversarial text per family vs 1 KB × 1,000', await (await import('./redaction.bench.ts')).runRedactionBench());
if (!only || only === 'distributed') printTable('BullMQ worker vs bare BullMQ worker', await (await import('./distributed.bench.ts')).runDistributedBench());
if (!only || only === 'airline')
  printTable('Airline workload: SQLite vs BullMQ + PostgreSQL', await (await import('./airline-backends.bench.ts')).runAirlineBackendsBench());
if (!only || only === 'mcp')
  printTable(
    'MCP proxy: tools/call round trip through toolrun mcp-proxy vs straight, and 8 concurrent clients',
    await (await import('./mcp.bench.ts')).runMcpBench(),
  );
if (!only || only === 'hosts') printTable('OpenAI Agents, Anthropic: per tool call', await (await import('./hosts-openai-anthropic.bench.ts')).runHostsBench());
if (!only || only === 'openai-agents-dlq')
  printTable(
    'OpenAI Agents: a 2-step run with the tool DLQ configured vs the SDK tool',
    await (await import('./openai-agents-dead-letter.bench.ts')).runOpenAiAgentsDeadLetterBench(),
  );
if (!only || only === 'anthropic-dlq')
  printTable(
    'Anthropic: a 2-step tool-runner run with the tool DLQ configured vs the SDK tool',
    await (await import('./anthropic-dead-letter.bench.ts')).runAnthropicDeadLetterBench(),
  );
if (!only || only === 'langchain') printTable('LangChain createAgent', await (await import('./langchain.bench.ts')).runLangChainBench());
if (!only || only === 'langchain' || only === 'langchain-dlq')
  printTable(
    'LangChain createAgent: a dead-letter place vs bare tools, per 2-step run',
    await (await import('./langchain.bench.ts')).runLangChainDeadLetterBench(),
  );
if (!only || only === 'dashboard')
  printTable('Dashboard: first byte and a rendered list on a large tool DLQ', await (await import('./dashboard.bench.ts')).runDashboardBench());
if (!only || only === 'ai-sdk') printTable('AI SDK generateText per tool call; runAgent step', await (await import('./ai-sdk.bench.ts')).runAiSdkBench());
if (!only || only === 'postgres-steps')
  printTable(
    'PostgreSQL: step cost against conversation length, one commit vs port by port',
    await (await import('./postgres-steps.bench.ts')).runPostgresStepsBench(),
  );
if (!only || only === 'dbos')
  printTable('DBOS: a 3-step agent run with toolrun vs bare DBOS steps vs the PostgreSQL worker', await (await import('./dbos.bench.ts')).runDbosBench());
if (!only || only === 'scale') printTable('Scale: DLQ reads at 10^3, 10^5, 10^6 tool-DLQ entries', await (await import('./scale.bench.ts')).runScaleBench());
if (!only || only === 'scale' || only === 'scale-report')
  printTable(
    'Scale: toolrun report over 10^3, 10^5, 10^6 failure records, peak RSS of the child process',
    await (await import('./report-scale.bench.ts')).runReportScaleBench(),
  );
if (!only || only === 'scale' || only === 'scale-drain')
  printTable('Scale: drain throughput against tool-DLQ size, 10^3, 10^5, 10^6 entries', await (await import('./drain-scale.bench.ts')).runDrainScaleBench());
