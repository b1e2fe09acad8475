import Anthropic from '@anthropic-ai/sdk';
import { createToolRuntime, createToolrun } from '../../src/index.ts';
import { createAnthropicModel, toAnthropicTools } from '../../src/adapters/anthropic/index.ts';
import { cancelTurns, scriptedAnthropicFetch } from './offline.ts';
import { tools } from './tools.ts';

// offline stand-in: the real client on a scripted endpoint; with a key: new Anthropic({ maxRetries: 0 })
const client = () => new Anthropic({ apiKey: 'offline', maxRetries: 0, fetch: scriptedAnthropicFetch(cancelTurns) });
const messages = [{ role: 'user' as const, content: 'Cancel ZFA04Y' }];

// toolrun's tools in the SDK's own tool runner: a failure goes back as tool_result with is_error: true
const runtime = createToolRuntime({ tools });
const final = await client().beta.messages.toolRunner({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages, tools: toAnthropicTools(runtime) });
console.log(final.content);

// or Claude as the model of toolrun's loop (runAgent, handleMessage, the worker, the main job)
const toolrun = createToolrun({ model: createAnthropicModel({ client: client(), model: 'claude-sonnet-4-5' }), tools });
console.log((await toolrun.handleMessage({ id: 'msg-1', body: '{"input":"Cancel ZFA04Y"}' })).status);
