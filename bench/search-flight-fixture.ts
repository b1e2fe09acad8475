/** The one tool the hot-path benchmarks call: a flight search with a strict schema and a trivial body. */

/** Its JSON Schema: two IATA codes and a date. */
export const SEARCH_FLIGHT_SCHEMA = {
  type: 'object',
  properties: {
    origin: { type: 'string', pattern: '^[A-Z]{3}$' },
    destination: { type: 'string', pattern: '^[A-Z]{3}$' },
    date: { type: 'string', format: 'date' },
  },
  required: ['origin', 'destination', 'date'],
  additionalProperties: false,
};

/** Valid arguments. */
export const SEARCH_FLIGHT_ARGS = { origin: 'JFK', destination: 'SEA', date: '2024-05-20' };

/** The tool's work: nothing but building a small result. */
export const searchFlight = async (input: Record<string, unknown>) => ({ flights: [input.origin, input.destination] });
