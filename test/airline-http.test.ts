import { afterEach, describe, expect, it } from 'vitest';
import { ToolError } from '../src/core/tool-error.ts';
import { hasSharedData } from '../examples/shared-data.ts';
import { startAirlineService, type AirlineRequestEvent, type AirlineService, type AirlineServiceOptions } from '../examples/airline/http-service.ts';
import { createAirlineHttpTools } from '../examples/airline/http-tools.ts';
import type { AirlineToolContext, AirlineToolDefinition } from '../examples/airline/tool-definition-shape.ts';

const dataPresent = hasSharedData('tau-bench', 'airline-db', 'users.json') && hasSharedData('tau-bench', 'tools.airline.json');

/** A real booking from trajectory t0 (mia_li_3668, JFK→SEA via ATL, certificate + card). */
const BOOKING = {
  user_id: 'mia_li_3668',
  origin: 'JFK',
  destination: 'SEA',
  flight_type: 'one_way',
  cabin: 'economy',
  flights: [
    { flight_number: 'HAT136', date: '2024-05-20' },
    { flight_number: 'HAT039', date: '2024-05-20' },
  ],
  passengers: [{ first_name: 'Mia', last_name: 'Li', dob: '1990-04-05' }],
  payment_methods: [
    { payment_id: 'certificate_7504069', amount: 250 },
    { payment_id: 'credit_card_4421486', amount: 55 },
  ],
  total_baggages: 3,
  nonfree_baggages: 1,
  insurance: 'no',
};

let services: AirlineService[] = [];
afterEach(async () => {
  await Promise.all(services.map((service) => service.close()));
  services = [];
});

async function start(options: AirlineServiceOptions = {}): Promise<AirlineService> {
  const service = await startAirlineService(options);
  services.push(service);
  return service;
}

function context(overrides: Partial<AirlineToolContext> = {}): AirlineToolContext {
  return { signal: new AbortController().signal, attempt: 1, callId: 'call_1', sessionId: 'session_1', idempotencyKey: 'key_1', ...overrides };
}

function tool(tools: AirlineToolDefinition[], name: string): AirlineToolDefinition {
  const found = tools.find((definition) => definition.name === name);
  if (found === undefined) throw new Error(`no tool ${name}`);
  return found;
}

async function failureOf(promise: Promise<unknown>): Promise<ToolError> {
  try {
    await promise;
  } catch (error) {
    if (ToolError.is(error)) return error;
    throw error;
  }
  throw new Error('expected a ToolError');
}

/** Sends a fixed sequence of calls (2 runs × 3 tools × 4 calls × 2 attempts) and returns the status of each. */
async function statusSequence(service: AirlineService): Promise<string[]> {
  const statuses: string[] = [];
  for (const runId of ['run-a', 'run-b']) {
    const tools = createAirlineHttpTools({ baseUrl: service.url, runId });
    for (const [name, args] of [
      ['get_user_details', { user_id: 'mia_li_3668' }],
      ['get_reservation_details', { reservation_id: 'NO6JO3' }],
      ['list_all_airports', {}],
    ] as const) {
      for (let call = 0; call < 4; call += 1) {
        for (let attempt = 1; attempt <= 2; attempt += 1) {
          try {
            await tool(tools, name).execute(args, context({ attempt, idempotencyKey: `${runId}-${name}-${call}` }));
            statuses.push('200');
          } catch (error) {
            statuses.push(ToolError.is(error) ? `${error.status ?? ''}:${error.kind}` : String(error));
          }
        }
      }
    }
  }
  return statuses;
}

describe.skipIf(!dataPresent)('airline HTTP service and HTTP tools', () => {
  it('serves the 14 tools with the τ-bench schemas; every tool is idempotent (writes by idempotency key), writes fall back to a human agent', async () => {
    const service = await start();
    const tools = createAirlineHttpTools({ baseUrl: service.url, runId: 'run-1' });
    expect(tools.map((definition) => definition.name)).toHaveLength(14);
    expect(tool(tools, 'get_user_details').idempotent).toBe(true);
    expect(tool(tools, 'book_reservation').idempotent).toBe(true);
    expect(tool(tools, 'book_reservation').fallbacks).toEqual(['transfer_to_human_agents']);
    expect(tool(tools, 'book_reservation').sensitive).toEqual(['passengers']);
    expect(tool(tools, 'search_direct_flight').inputSchema).toMatchObject({ required: ['origin', 'destination', 'date'] });
    const user = (await tool(tools, 'get_user_details').execute({ user_id: 'mia_li_3668' }, context())) as { membership: string };
    expect(user.membership).toBe('gold');
  });

  it('maps business refusals to not_found (404), precondition (409) and invalid_input (422) with the original text', async () => {
    const service = await start();
    const tools = createAirlineHttpTools({ baseUrl: service.url, runId: 'run-1' });
    const notFound = await failureOf(tool(tools, 'get_reservation_details').execute({ reservation_id: 'NOPE00' }, context()));
    expect([notFound.kind, notFound.status, notFound.message]).toEqual(['not_found', 404, 'reservation not found']);
    const mismatch = await failureOf(
      tool(tools, 'book_reservation').execute({ ...BOOKING, payment_methods: [{ payment_id: 'credit_card_4421486', amount: 255 }] }, context()),
    );
    expect([mismatch.kind, mismatch.status, mismatch.message]).toEqual([
      'invalid_input',
      422,
      'payment amount does not add up, total price is 305, but paid 255',
    ]);
    const noBalance = await failureOf(
      tool(tools, 'book_reservation').execute(
        { ...BOOKING, payment_methods: [{ payment_id: 'certificate_4856383', amount: 305 }] },
        context({ idempotencyKey: 'key_2' }),
      ),
    );
    expect([noBalance.kind, noBalance.status, noBalance.message]).toEqual(['precondition', 409, 'not enough balance in payment method certificate_4856383']);
    expect(service.stats().mutationsApplied).toBe(0);
  });

  it('draws the same faults for the same seed, other faults for another seed, and lets retries succeed', async () => {
    const profile = { unavailableRate: 0.3, rateLimitRate: 0.2, retryAfterSeconds: 0 };
    const first = await statusSequence(await start({ faultProfile: profile, seed: 7 }));
    const again = await statusSequence(await start({ faultProfile: profile, seed: 7 }));
    const otherSeed = await statusSequence(await start({ faultProfile: profile, seed: 8 }));
    expect(again).toEqual(first);
    expect(otherSeed).not.toEqual(first);
    expect(first).toContain('503:server');
    expect(first).toContain('429:rate_limit');
    // attempt 2 of a call that failed on attempt 1 draws again: some of them succeed
    const recoveredOnRetry = first.filter((status, index) => index % 2 === 1 && status === '200' && first[index - 1] !== '200');
    expect(recoveredOnRetry.length).toBeGreaterThan(0);
  });

  it('turns a 429 into rate_limit with retryAfterMs from Retry-After', async () => {
    const service = await start({ faultProfile: { rateLimitRate: 1, retryAfterSeconds: 3 } });
    const tools = createAirlineHttpTools({ baseUrl: service.url, runId: 'run-1' });
    const failure = await failureOf(tool(tools, 'list_all_airports').execute({}, context()));
    expect([failure.kind, failure.status, failure.retryAfterMs]).toEqual(['rate_limit', 429, 3000]);
  });

  it('answers 401 to everyone for a tool with a misconfigured credential, and only for that tool', async () => {
    const service = await start({ faultProfile: { unauthorizedTools: ['search_direct_flight'] } });
    for (const runId of ['run-1', 'run-2']) {
      const tools = createAirlineHttpTools({ baseUrl: service.url, runId });
      const failure = await failureOf(tool(tools, 'search_direct_flight').execute({ origin: 'JFK', destination: 'SEA', date: '2024-05-20' }, context()));
      expect([failure.kind, failure.status]).toEqual(['auth', 401]);
      await expect(tool(tools, 'list_all_airports').execute({}, context())).resolves.toMatchObject({ JFK: 'New York' });
    }
    expect(service.stats().faults.unauthorized).toBe(2);
  });

  it('applies a write once per idempotency key: a repeated booking returns the stored answer', async () => {
    const service = await start();
    const tools = createAirlineHttpTools({ baseUrl: service.url, runId: 'run-1' });
    const book = tool(tools, 'book_reservation');
    const first = (await book.execute(BOOKING, context({ idempotencyKey: 'booking-1' }))) as { reservation_id: string };
    const repeated = (await book.execute(BOOKING, context({ idempotencyKey: 'booking-1', attempt: 2 }))) as { reservation_id: string };
    expect(first.reservation_id).toBe('HATHAT');
    expect(repeated).toEqual(first);
    expect(service.stats().idempotentReplays).toBe(1);
    expect(service.mutations()).toEqual([{ databaseKey: 'run-1', runId: 'run-1', idempotencyKey: 'booking-1', toolName: 'book_reservation', applications: 1 }]);
    expect(
      service
        .database('run-1')
        ?.getUser('mia_li_3668')
        ?.reservations.filter((id) => id.startsWith('HATHA')),
    ).toEqual(['HATHAT']);
    // a new key is a new booking (the certificate is used up by then, so it is refused: the state really changed)
    const second = await failureOf(book.execute(BOOKING, context({ idempotencyKey: 'booking-2' })));
    expect(second.message).toBe('payment method certificate_7504069 not found');
    expect(service.stats().maxApplicationsPerKey).toBe(1);
  });

  it('keeps one database per run (or per database key)', async () => {
    const service = await start();
    const runOne = createAirlineHttpTools({ baseUrl: service.url, runId: 'conversation-r0', databaseKey: (runId) => runId.replace(/-r\d+$/, '') });
    const runTwo = createAirlineHttpTools({ baseUrl: service.url, runId: 'conversation-r1', databaseKey: (runId) => runId.replace(/-r\d+$/, '') });
    const stranger = createAirlineHttpTools({ baseUrl: service.url, runId: 'other-run' });
    await tool(runOne, 'book_reservation').execute(BOOKING, context({ idempotencyKey: 'b' }));
    await expect(tool(runTwo, 'get_reservation_details').execute({ reservation_id: 'HATHAT' }, context())).resolves.toMatchObject({ user_id: 'mia_li_3668' });
    const failure = await failureOf(tool(stranger, 'get_reservation_details').execute({ reservation_id: 'HATHAT' }, context()));
    expect(failure.kind).toBe('not_found');
  });

  it('holds a hanging call until the client aborts; the hang applied the write, so the retry gets the stored answer', async () => {
    let hangSeen: (event: AirlineRequestEvent) => void = () => undefined;
    const hanging = new Promise<AirlineRequestEvent>((resolve) => {
      hangSeen = resolve;
    });
    const service = await start({
      faultProfile: { hangRate: 1 },
      onRequest: (event) => {
        if (event.fault === 'hang') hangSeen(event);
      },
    });
    const tools = createAirlineHttpTools({ baseUrl: service.url, runId: 'run-1' });
    const controller = new AbortController();
    const pending = tool(tools, 'book_reservation').execute(BOOKING, context({ signal: controller.signal, idempotencyKey: 'booking-1' }));
    const event = await hanging;
    expect(event).toMatchObject({ toolName: 'book_reservation', attempt: 1, callIndex: 0 });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(service.stats().responsesByStatus.hang).toBe(1);

    service.setFaultProfile({});
    const retried = (await tool(tools, 'book_reservation').execute(BOOKING, context({ idempotencyKey: 'booking-1', attempt: 2 }))) as {
      reservation_id: string;
    };
    expect(retried.reservation_id).toBe('HATHAT');
    expect(service.stats()).toMatchObject({ mutationsApplied: 1, idempotentReplays: 1, maxApplicationsPerKey: 1 });
  });

  it('can also hang without applying the write', async () => {
    const service = await start({ faultProfile: { hangRate: 1, hangAppliesMutation: false } });
    const tools = createAirlineHttpTools({ baseUrl: service.url, runId: 'run-1' });
    const controller = new AbortController();
    const pending = tool(tools, 'send_certificate').execute({ user_id: 'mia_li_3668', amount: 50 }, context({ signal: controller.signal }));
    while (service.stats().faults.hang === 0) await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(service.stats().mutationsApplied).toBe(0);
    expect(service.database('run-1')?.getUser('mia_li_3668')?.payment_methods.certificate_3221322).toBeUndefined();
  });
});
