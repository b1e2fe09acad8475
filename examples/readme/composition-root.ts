import { createToolrun, type WorkerEvent } from '../../src/index.ts';
import { createSqliteStores } from '../../src/stores/sqlite/index.ts';
import { model } from './model.ts'; // a scripted model from toolrun/testing; a real one: createOpenAiChatModel(…) from toolrun/openai
import { tools } from './tools.ts'; // cancel_reservation

const alerts: WorkerEvent[] = [];
const toolrun = createToolrun({
  model,
  tools, // the runtime is built once (schemas compiled once)
  stores: createSqliteStores({ path: '.toolrun/readme-example.db' }), // default: new in-memory stores of this toolrun
  limits: { toolRetryBudget: 2, maxSteps: 20, maxDeliveries: 5 },
  hooks: { onEvent: (event) => alerts.push(event), onToolCall: (record, step) => console.log(`step ${step}: ${record.toolName} ${record.result.status}`) },
});
const result = await toolrun.handleMessage({ id: `msg-${Date.now()}`, body: '{"input":"Cancel reservation ZFA04Y"}' });
console.log(result.status); // completed

await toolrun.stores.queue.enqueue({ body: '{"input":"Cancel reservation ZFA04Y"}' });
await toolrun.createWorker({ concurrency: 4 }).runUntilEmpty(); // or .run(): consumes until stop()
const report = await toolrun.drain(); // replays every tool-DLQ entry once
console.log(`drained ${report.total} entries; ${alerts.length} alerts`);
