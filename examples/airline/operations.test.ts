import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/tool-error.ts';
import { hasSharedData } from '../shared-data.ts';
import { createAirlineDatabase } from './database.ts';
import { airlineOperations, formatAirlineReply } from './operations.ts';

const dataPresent = hasSharedData('tau-bench', 'airline-db', 'users.json');

function refusal(run: () => unknown): ToolError {
  try {
    run();
  } catch (error) {
    if (ToolError.is(error)) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('calculate', () => {
  const database = undefined as never;
  it('answers like round(eval(expression), 2) as a Python float', () => {
    expect(airlineOperations.calculate(database, { expression: '152 + 103' })).toBe('255.0');
    expect(airlineOperations.calculate(database, { expression: '(350 - 122) * 2 + (499 - 127) * 2' })).toBe('1200.0');
    expect(airlineOperations.calculate(database, { expression: '10 / 3' })).toBe('3.33');
    expect(airlineOperations.calculate(database, { expression: '-(2 + 3) * 1.5' })).toBe('-7.5');
    expect(airlineOperations.calculate(database, { expression: '2 ** 3 // 3' })).toBe('2.0');
  });

  it('refuses other characters, bad syntax and division by zero as invalid_input', () => {
    expect(refusal(() => airlineOperations.calculate(database, { expression: 'import os' })).message).toBe('invalid characters in expression');
    expect(refusal(() => airlineOperations.calculate(database, { expression: '1 +' })).kind).toBe('invalid_input');
    expect(refusal(() => airlineOperations.calculate(database, { expression: '1 / 0' })).message).toBe('division by zero');
  });
});

describe.skipIf(!dataPresent)('airline database and operations', () => {
  it('gives each run its own copy: a change in one run is invisible to another and to the initial data', () => {
    const first = createAirlineDatabase();
    const second = createAirlineDatabase();
    const seatsBefore = second.getFlight('HAT136')?.dates['2024-05-20'];
    const reply = airlineOperations.send_certificate(first, { user_id: 'mia_li_3668', amount: 100 });
    expect(reply).toBe('Certificate certificate_3221322 added to user mia_li_3668 with amount 100.');
    expect(first.getUser('mia_li_3668')?.payment_methods.certificate_3221322).toBeDefined();
    expect(second.getUser('mia_li_3668')?.payment_methods.certificate_3221322).toBeUndefined();
    expect(createAirlineDatabase().getUser('mia_li_3668')?.payment_methods.certificate_3221322).toBeUndefined();
    expect(first.changedRecords()).toEqual({ flights: [], users: ['mia_li_3668'], reservations: [] });
    expect(second.getFlight('HAT136')?.dates['2024-05-20']).toEqual(seatsBefore);
    // unchanged records are shared and frozen, so a tool that forgot to call edit* fails loudly
    expect(() => {
      (second.getUser('mia_li_3668') as { email: string }).email = 'x';
    }).toThrow(TypeError);
  });

  it('creates a fresh database in well under a millisecond (copy-on-write, not a deep copy)', () => {
    createAirlineDatabase();
    const started = performance.now();
    for (let index = 0; index < 1000; index += 1) createAirlineDatabase();
    expect((performance.now() - started) / 1000).toBeLessThan(1);
  });

  it('numbers new reservations HATHAT, HATHAU, … and takes the seats', () => {
    const database = createAirlineDatabase();
    const booking = {
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
      payment_methods: [{ payment_id: 'credit_card_4421486', amount: 255 }],
      total_baggages: 0,
      nonfree_baggages: 0,
      insurance: 'no',
    };
    const seats = (database.getFlight('HAT136')?.dates['2024-05-20'] as { available_seats: { economy: number } }).available_seats.economy;
    const first = airlineOperations.book_reservation(database, booking) as { reservation_id: string };
    const second = airlineOperations.book_reservation(database, booking) as { reservation_id: string };
    expect([first.reservation_id, second.reservation_id]).toEqual(['HATHAT', 'HATHAU']);
    expect((database.getFlight('HAT136')?.dates['2024-05-20'] as { available_seats: { economy: number } }).available_seats.economy).toBe(seats - 2);
    expect(formatAirlineReply(first)).toMatch(/^\{"reservation_id": "HATHAT", "user_id": "mia_li_3668", /);
    expect(refusal(() => airlineOperations.get_user_details(database, { user_id: 'nobody_1' })).kind).toBe('not_found');
  });
});
