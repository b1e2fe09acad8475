import { AIMessage, createAgent, fakeModel } from 'langchain';
import { createToolRuntime } from '../../src/index.ts';
import { toolrunMiddleware } from '../../src/adapters/langchain/index.ts';
import { tools } from './tools.ts';

const model = fakeModel() // LangChain's own offline model; in an app: new ChatOpenAI({ model: 'gpt-4o-mini' }), or any chat model
  .respondWithTools([{ name: 'cancel_reservation', args: { reservation_id: 'zfa04y' }, id: 'call_1' }]) // the pattern wants upper case
  .respondWithTools([{ name: 'cancel_reservation', args: { reservation_id: 'ZFA04Y' }, id: 'call_2' }])
  .respond(new AIMessage('Reservation ZFA04Y is cancelled.'));

const runtime = createToolRuntime({ tools });
const agent = createAgent({ model, middleware: [toolrunMiddleware(runtime)] }); // no `tools`: the middleware registers them
const { messages } = await agent.invoke({ messages: [{ role: 'user', content: 'Cancel ZFA04Y' }] }, { configurable: { thread_id: 'chat-42' } });
for (const message of messages) if (message.type === 'tool') console.log(String(message.content).slice(0, 100)); // toolrun's envelopes
console.log(messages.at(-1)?.content);
