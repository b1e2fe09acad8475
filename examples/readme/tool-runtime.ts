import { createToolRuntime, defineTool, formatToolResult, ToolError } from '../../src/index.ts';

const api = process.env.RESERVATIONS_API ?? 'http://127.0.0.1:59999'; // nothing listens there: the call fails NETWORK_ERROR after its retries
const messages: Array<{ role: 'tool'; content: string }> = [];

const getReservation = defineTool({
  name: 'get_reservation_details',
  description: 'Get the details of a reservation',
  inputSchema: { type: 'object', properties: { reservation_id: { type: 'string' } }, required: ['reservation_id'] },
  strictSchema: { type: 'object', properties: { reservation_id: { type: 'string', pattern: '^[A-Z0-9]{6}$' } }, required: ['reservation_id'] },
  idempotent: true, // safe to retry after an ambiguous failure
  timeoutMs: 5_000, // per attempt; the work is aborted through ctx.signal
  fallbacks: ['transfer_to_human_agents'],
  sensitive: ['payment_id'], // redacted in logs and dead-letter entries
  async execute({ reservation_id }, ctx) {
    const response = await fetch(`${api}/reservations/${String(reservation_id)}`, { signal: ctx.signal, headers: { 'idempotency-key': ctx.idempotencyKey } });
    if (response.status === 404) throw new ToolError({ kind: 'not_found', status: 404, message: `reservation ${String(reservation_id)} not found` });
    if (!response.ok) throw response; // classified by status, Retry-After read from its headers
    return response.json();
  },
});

const runtime = createToolRuntime({ tools: [getReservation], retry: { backoff: { baseDelayMs: 50 } } }); // default base 500 ms
const result = await runtime.run({ name: 'get_reservation_details', args: '{"reservation_id":"ZFA04Y"}', sessionId: 'chat-42' });
messages.push({ role: 'tool', content: formatToolResult(result) }); // <tool_result tool="…" status="…">{json}</tool_result>
console.log(messages[0]?.content);
