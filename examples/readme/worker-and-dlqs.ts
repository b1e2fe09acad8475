import { drainToolDlq, handleMessage, replayToolFailure, type MessageFailureEntry, type ToolFailureEntry } from '../../src/index.ts';
import { createSqliteStores } from '../../src/stores/sqlite/index.ts';
import { model } from './model.ts';
import { service, tools } from './tools.ts';

const stores = createSqliteStores({ path: '.toolrun/readme-example.db' }); // or createMemoryStores() from toolrun
const queues = { messageDlq: [] as MessageFailureEntry[], toolDlq: [] as ToolFailureEntry[] }; // any object with push(): or stores.messageDlq, stores.toolDlq

service.down = true; // the reservation service answers 503 to every call
const result = await handleMessage(
  { body: '{"input":"Cancel reservation ZFA04Y"}', id: `msg-${Date.now()}` },
  { model, tools, stores, toolRetryBudget: 2, queues },
);
// result.status: 'completed' | 'tool_failed' | 'model_failed' | 'rejected' | 'delivery_limit_exceeded' | 'busy'
//                | 'max_steps' | 'deadline_exceeded' | 'cancelled'
const [entry] = queues.toolDlq;
console.log(result.status, entry?.reason, entry?.lastError.message); // tool_failed, retry-budget-exhausted, …

service.down = false; // the service is back
if (entry) console.log((await replayToolFailure(entry, { model, tools, stores })).status); // 'completed' | 'already_completed' | 'in_progress' | 'expired' | …

const rejected = await handleMessage({ body: '{"input": 42}' }, { model, tools, stores, queues }); // a defect of the message: the model is never called
console.log(rejected.status, queues.messageDlq[0]?.reason.code); // rejected INVALID_MESSAGE

const report = await drainToolDlq({ model, tools, stores, concurrency: 4 }); // every entry of stores.toolDlq, once
console.log(`drain: ${report.total} entries`);
