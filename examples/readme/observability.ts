import { pino } from 'pino';
import { createMemoryStores, handleMessage } from '../../src/index.ts';
import { buildFailureReport, createMemoryFailureLog, createObservability } from '../../src/observability/index.ts';
import { model } from './model.ts';
import { tools } from './tools.ts';

const stores = createMemoryStores();
const failureLog = createMemoryFailureLog(); // in memory here; `toolrun report --db` reads the SQLite one (createSqliteFailureLog, toolrun/sqlite)
const observability = createObservability({ logger: pino({ level: 'warn' }), failureLog, stores }); // pino, OpenTelemetry API, failure log
await handleMessage(
  { id: 'msg-1', body: '{"input":"Cancel reservation ZFA04Y"}' },
  {
    model,
    tools,
    stores,
    queues: { messageDlq: stores.messageDlq, toolDlq: stores.toolDlq },
    runtimeOptions: { onCallEnd: observability.onCallEnd },
    runHooks: observability.runHooks,
    onEvent: observability.onEvent,
  },
);
console.log(buildFailureReport(await failureLog.list()).totals); // what `toolrun report` prints, as data
