/**
 * The tools the README's examples share: one reservation tool over an in-memory service, so every
 * example runs offline. `service.down` makes the service answer 503 (the DLQ example turns it on).
 */
import { defineTool, ToolError } from '../../src/index.ts';

const reservations = new Map([['ZFA04Y', { flight: 'HAT001', status: 'confirmed' }]]);

/** The service's switch: while `down`, every call fails with a 503. */
export const service = { down: false };

/** `cancel_reservation`: cancels a reservation of the in-memory service (idempotent: cancelling twice is one cancellation). */
export const tools = [
  defineTool({
    name: 'cancel_reservation',
    description: 'Cancel a reservation, by its 6-character id',
    inputSchema: {
      type: 'object',
      properties: { reservation_id: { type: 'string', pattern: '^[A-Z0-9]{6}$' } },
      required: ['reservation_id'],
      additionalProperties: false,
    } as const,
    idempotent: true,
    async execute({ reservation_id }) {
      if (service.down) throw new ToolError({ kind: 'server', status: 503, message: 'the reservation service is unavailable' });
      const reservation = reservations.get(reservation_id);
      if (reservation === undefined) throw new ToolError({ kind: 'not_found', status: 404, message: `reservation ${reservation_id} not found` });
      reservation.status = 'cancelled';
      return { reservation_id, ...reservation };
    },
  }),
];
