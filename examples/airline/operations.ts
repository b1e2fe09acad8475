/**
 * The 14 τ-bench airline tools as pure functions over one run's database: `(database, args) →
 * result`. Reimplemented from the tool schemas, the airline policy and the recorded replies of
 * `gpt-4o-airline.trajectories.json` (no upstream code). `formatAirlineReply(result)` is the exact
 * text the original tool replied; a business refusal is thrown as a `ToolError` (see
 * `airline-refusal.ts`). Arguments are assumed valid against the tool's schema (the runtime
 * validates them first).
 */
import type { AirlineDatabase } from './database.ts';
import type { Cabin, Flight, FlightDate, Passenger, Payment, PaymentMethod, Reservation, ReservationFlight, User } from './airline-types.ts';
import { airlineRefusal } from './airline-refusal.ts';
import { formatPythonFloat, toPythonJson } from './python-json.ts';

/** The names of the 14 airline tools. */
export const AIRLINE_TOOL_NAMES = [
  'book_reservation',
  'calculate',
  'cancel_reservation',
  'get_reservation_details',
  'get_user_details',
  'list_all_airports',
  'search_direct_flight',
  'search_onestop_flight',
  'send_certificate',
  'think',
  'transfer_to_human_agents',
  'update_reservation_baggages',
  'update_reservation_flights',
  'update_reservation_passengers',
] as const;

/** One of {@link AIRLINE_TOOL_NAMES}. */
export type AirlineToolName = (typeof AIRLINE_TOOL_NAMES)[number];

/** The tools that change the database (the others only read it). */
export const AIRLINE_WRITE_TOOLS: ReadonlySet<AirlineToolName> = new Set([
  'book_reservation',
  'cancel_reservation',
  'send_certificate',
  'update_reservation_baggages',
  'update_reservation_flights',
  'update_reservation_passengers',
]);

/** What a tool returns: a JSON value, or a plain text for the tools that answer with text. */
export type AirlineResult = unknown;

/** An airline tool as a function: reads (and for writes, changes) `database`; throws refusals. */
export type AirlineOperation = (database: AirlineDatabase, args: Record<string, unknown>) => AirlineResult;

/** The simulated "now" of the τ-bench airline domain (policy: 2024-05-15 15:00:00 EST). */
export const AIRLINE_NOW = '2024-05-15T15:00:00';
/** The id of the first reservation booked in a run; later ones count up (`HATHAU`, `HATHAV`…), as recorded. */
export const FIRST_NEW_RESERVATION_ID = 'HATHAT';
/** The id every new certificate gets in the recorded replies. */
export const NEW_CERTIFICATE_ID = 'certificate_3221322';

const PRICE_PER_EXTRA_BAG = 50;
const INSURANCE_PER_PASSENGER = 30;

const AIRPORTS: Record<string, string> = {
  SFO: 'San Francisco',
  JFK: 'New York',
  LAX: 'Los Angeles',
  ORD: 'Chicago',
  DFW: 'Dallas',
  DEN: 'Denver',
  SEA: 'Seattle',
  ATL: 'Atlanta',
  MIA: 'Miami',
  BOS: 'Boston',
  PHX: 'Phoenix',
  IAH: 'Houston',
  LAS: 'Las Vegas',
  MCO: 'Orlando',
  EWR: 'Newark',
  CLT: 'Charlotte',
  MSP: 'Minneapolis',
  DTW: 'Detroit',
  PHL: 'Philadelphia',
  LGA: 'LaGuardia',
};

/** The exact reply text of the original tool for a successful result. */
export function formatAirlineReply(result: AirlineResult): string {
  return typeof result === 'string' ? result : toPythonJson(result);
}

/** A number as Python's `str()` prints it (ints plain, other floats as `repr`). */
function formatPythonNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : formatPythonFloat(value);
}

interface FlightSegmentArgument {
  flight_number: string;
  date: string;
}

function requireUser(database: AirlineDatabase, userId: unknown) {
  const user = database.getUser(String(userId));
  if (user === undefined) throw airlineRefusal('not_found', 'USER_NOT_FOUND', 'user not found');
  return user;
}

function requireReservation(database: AirlineDatabase, reservationId: unknown) {
  const reservation = database.getReservation(String(reservationId));
  if (reservation === undefined) throw airlineRefusal('not_found', 'RESERVATION_NOT_FOUND', 'reservation not found');
  return reservation;
}

/** The flight's public fields (everything but `dates`), in stored order. */
function flightSummary(flight: Readonly<Flight>): Record<string, unknown> {
  const { dates: _dates, ...summary } = flight;
  return summary;
}

function availableOn(flight: Readonly<Flight>, date: string): Extract<FlightDate, { status: 'available' }> | undefined {
  const state = flight.dates[date];
  return state !== undefined && state.status === 'available' ? (state as Extract<FlightDate, { status: 'available' }>) : undefined;
}

/** Looks a segment up for booking: the flight, its price in `cabin`, or a refusal. */
function priceSegment(database: AirlineDatabase, segment: FlightSegmentArgument, cabin: Cabin, passengerCount: number): ReservationFlight {
  const flight = database.getFlight(segment.flight_number);
  if (flight === undefined) throw airlineRefusal('not_found', 'FLIGHT_NOT_FOUND', `flight ${segment.flight_number} not found`);
  const state = availableOn(flight, segment.date);
  if (state === undefined) {
    throw airlineRefusal('precondition', 'FLIGHT_NOT_AVAILABLE', `flight ${segment.flight_number} not available on date ${segment.date}`);
  }
  if (state.available_seats[cabin] < passengerCount) {
    throw airlineRefusal('precondition', 'NOT_ENOUGH_SEATS', `not enough seats on flight ${segment.flight_number}`);
  }
  // The argument object is extended (as recorded: keys the model sent keep their place).
  return { ...segment, price: state.prices[cabin], origin: flight.origin, destination: flight.destination } as ReservationFlight;
}

function takeSeats(database: AirlineDatabase, segments: readonly ReservationFlight[], cabin: Cabin, seatCount: number): void {
  for (const segment of segments) {
    const state = database.editFlight(segment.flight_number)?.dates[segment.date];
    if (state !== undefined && state.status === 'available') state.available_seats[cabin] -= seatCount;
  }
}

const ID_DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** `HATHAT`, or the next free id counting up in base 36 (`HATHAU`, …, `HATHAZ`, `HATHB0`). */
function nextReservationId(database: AirlineDatabase): string {
  let id = FIRST_NEW_RESERVATION_ID;
  while (database.getReservation(id) !== undefined) {
    const characters = [...id];
    for (let index = characters.length - 1; index >= 0; index -= 1) {
      const digit = ID_DIGITS.indexOf(characters[index] as string);
      characters[index] = ID_DIGITS[(digit + 1) % ID_DIGITS.length] as string;
      if (digit + 1 < ID_DIGITS.length) break;
    }
    id = characters.join('');
  }
  return id;
}

function addDays(date: string, days: number): string {
  const next = new Date(`${date}T00:00:00Z`);
  next.setUTCDate(next.getUTCDate() + days);
  return next.toISOString().slice(0, 10);
}

const bookReservation: AirlineOperation = (database, args) => {
  const user = requireUser(database, args.user_id);
  const cabin = args.cabin as Cabin;
  const passengers = args.passengers as Passenger[];
  const segments = (args.flights as FlightSegmentArgument[]).map((segment) => priceSegment(database, segment, cabin, passengers.length));
  let totalPrice = segments.reduce((sum, segment) => sum + segment.price, 0) * passengers.length;
  if (args.insurance === 'yes') totalPrice += INSURANCE_PER_PASSENGER * passengers.length;
  totalPrice += PRICE_PER_EXTRA_BAG * Number(args.nonfree_baggages);

  const payments = args.payment_methods as Payment[];
  for (const payment of payments) {
    const method = user.payment_methods[payment.payment_id];
    if (method === undefined) throw airlineRefusal('not_found', 'PAYMENT_METHOD_NOT_FOUND', `payment method ${payment.payment_id} not found`);
    if ((method.source === 'gift_card' || method.source === 'certificate') && method.amount < payment.amount) {
      throw airlineRefusal('precondition', 'INSUFFICIENT_BALANCE', `not enough balance in payment method ${payment.payment_id}`);
    }
  }
  const paid = payments.reduce((sum, payment) => sum + payment.amount, 0);
  if (paid !== totalPrice) {
    throw airlineRefusal(
      'invalid_input',
      'PAYMENT_MISMATCH',
      `payment amount does not add up, total price is ${formatPythonNumber(totalPrice)}, but paid ${formatPythonNumber(paid)}`,
    );
  }

  const editableUser = database.editUser(String(args.user_id)) as User;
  for (const payment of payments) {
    const method = editableUser.payment_methods[payment.payment_id] as PaymentMethod;
    if (method.source === 'gift_card') method.amount -= payment.amount;
    else if (method.source === 'certificate') delete editableUser.payment_methods[payment.payment_id];
  }
  takeSeats(database, segments, cabin, passengers.length);
  const reservation: Reservation = {
    reservation_id: nextReservationId(database),
    user_id: String(args.user_id),
    origin: String(args.origin),
    destination: String(args.destination),
    flight_type: args.flight_type as Reservation['flight_type'],
    cabin,
    flights: segments,
    passengers: passengers.map((passenger) => ({ ...passenger })),
    payment_history: payments.map((payment) => ({ payment_id: payment.payment_id, amount: payment.amount })),
    created_at: AIRLINE_NOW,
    total_baggages: Number(args.total_baggages),
    nonfree_baggages: Number(args.nonfree_baggages),
    insurance: args.insurance as Reservation['insurance'],
  };
  database.putReservation(reservation);
  editableUser.reservations.push(reservation.reservation_id);
  return reservation;
};

/** Evaluates `+ - * / ** //`, parentheses and unary signs over decimal numbers, like Python's `eval` would. */
function evaluateArithmetic(expression: string): number {
  const tokens = expression.match(/\d+\.?\d*|\.\d+|\*\*|\/\/|[-+*/()]/g) ?? [];
  let position = 0;
  const peek = () => tokens[position];
  const fail = (): never => {
    throw airlineRefusal('invalid_input', 'INVALID_EXPRESSION', 'invalid syntax');
  };
  const parseSum = (): number => {
    let value = parseProduct();
    while (peek() === '+' || peek() === '-') value = tokens[position++] === '+' ? value + parseProduct() : value - parseProduct();
    return value;
  };
  const parseProduct = (): number => {
    let value = parseUnary();
    for (let operator = peek(); operator === '*' || operator === '/' || operator === '//'; operator = peek()) {
      position += 1;
      const right = parseUnary();
      if (operator !== '*' && right === 0) throw airlineRefusal('invalid_input', 'DIVISION_BY_ZERO', 'division by zero');
      value = operator === '*' ? value * right : operator === '/' ? value / right : Math.floor(value / right);
    }
    return value;
  };
  const parseUnary = (): number => {
    if (peek() === '-') return (position++, -parseUnary());
    if (peek() === '+') return (position++, parseUnary());
    return parsePower();
  };
  const parsePower = (): number => {
    const base = parseAtom();
    if (peek() === '**') return (position++, base ** parseUnary());
    return base;
  };
  const parseAtom = (): number => {
    const token = tokens[position++];
    if (token === '(') {
      const value = parseSum();
      if (tokens[position++] !== ')') fail();
      return value;
    }
    if (token === undefined || !/^[\d.]/.test(token)) return fail();
    return Number(token);
  };
  const value = parseSum();
  if (position !== tokens.length) fail();
  return value;
}

/** Python's `round(value, 2)`: correctly rounded on the binary value, ties to even. */
function roundToCents(value: number): number {
  const fixed = Number(value.toFixed(2));
  const scaled = value * 100;
  if (Number.isInteger(scaled * 2) && !Number.isInteger(scaled) && Math.abs(scaled) < 2 ** 52) {
    // an exact binary tie such as 0.125: Python rounds half to even
    const floor = Math.floor(scaled);
    return (floor % 2 === 0 ? floor : floor + 1) / 100;
  }
  return fixed;
}

const calculate: AirlineOperation = (_database, args) => {
  const expression = String(args.expression);
  if (!/^[0-9+\-*/(). ]*$/.test(expression)) {
    throw airlineRefusal('invalid_input', 'INVALID_CHARACTERS', 'invalid characters in expression');
  }
  return formatPythonFloat(roundToCents(evaluateArithmetic(expression)));
};

const cancelReservation: AirlineOperation = (database, args) => {
  requireReservation(database, args.reservation_id);
  const reservation = database.editReservation(String(args.reservation_id)) as Reservation;
  const refunds = reservation.payment_history.map((payment) => ({ payment_id: payment.payment_id, amount: -payment.amount }));
  reservation.payment_history.push(...refunds);
  reservation.status = 'cancelled';
  return reservation;
};

const getReservationDetails: AirlineOperation = (database, args) => requireReservation(database, args.reservation_id);

const getUserDetails: AirlineOperation = (database, args) => requireUser(database, args.user_id);

const listAllAirports: AirlineOperation = () => AIRPORTS;

const searchDirectFlight: AirlineOperation = (database, args) => {
  const date = String(args.date);
  const found: Array<Record<string, unknown>> = [];
  for (const flight of database.flights()) {
    if (flight.origin !== args.origin || flight.destination !== args.destination) continue;
    const state = availableOn(flight, date);
    if (state !== undefined) found.push({ ...flightSummary(flight), ...state });
  }
  return found;
};

const searchOnestopFlight: AirlineOperation = (database, args) => {
  const date = String(args.date);
  const found: Array<[Record<string, unknown>, Record<string, unknown>]> = [];
  const flights = [...database.flights()];
  for (const first of flights) {
    if (first.origin !== args.origin || first.destination === args.destination) continue;
    const firstState = availableOn(first, date);
    if (firstState === undefined) continue;
    const nextDay = first.scheduled_arrival_time_est.includes('+1');
    const secondDate = nextDay ? addDays(date, 1) : date;
    for (const second of flights) {
      if (second.origin !== first.destination || second.destination !== args.destination) continue;
      // The connection leaves at or after the arrival clock time, also on the next day (as recorded).
      if (second.scheduled_departure_time_est < first.scheduled_arrival_time_est.replace('+1', '')) continue;
      // As recorded: an overnight connection is labelled with the next day's date but shows the
      // seats and prices of the search date (an upstream quirk the replies depend on).
      const secondState = availableOn(second, date);
      if (secondState === undefined) continue;
      found.push([
        { ...flightSummary(first), ...firstState, date },
        { ...flightSummary(second), ...secondState, date: secondDate },
      ]);
    }
  }
  return found;
};

const sendCertificate: AirlineOperation = (database, args) => {
  requireUser(database, args.user_id);
  const user = database.editUser(String(args.user_id));
  const amount = Number(args.amount);
  if (user !== undefined) user.payment_methods[NEW_CERTIFICATE_ID] = { source: 'certificate', amount, id: NEW_CERTIFICATE_ID };
  return `Certificate ${NEW_CERTIFICATE_ID} added to user ${String(args.user_id)} with amount ${formatPythonNumber(amount)}.`;
};

const think: AirlineOperation = () => '';

const transferToHumanAgents: AirlineOperation = () => 'Transfer successful';

/** Checks a payment method for a reservation change and charges it (gift cards lose balance). */
function chargeForChange(database: AirlineDatabase, userId: string, paymentId: string, amount: number): void {
  const user = requireUser(database, userId);
  const method = user.payment_methods[paymentId];
  if (method === undefined) throw airlineRefusal('not_found', 'PAYMENT_METHOD_NOT_FOUND', 'payment method not found');
  if (method.source === 'certificate') {
    throw airlineRefusal('precondition', 'CERTIFICATE_NOT_ALLOWED', 'certificate cannot be used to update reservation');
  }
  if (method.source === 'gift_card' && method.amount < amount) {
    throw airlineRefusal('precondition', 'INSUFFICIENT_BALANCE', 'gift card balance is not enough');
  }
  if (method.source === 'gift_card') {
    const editable = database.editUser(userId)?.payment_methods[paymentId];
    if (editable !== undefined && editable.source === 'gift_card') editable.amount -= amount;
  }
}

const updateReservationBaggages: AirlineOperation = (database, args) => {
  const current = requireReservation(database, args.reservation_id);
  const totalBaggages = Number(args.total_baggages);
  const nonfreeBaggages = Number(args.nonfree_baggages);
  const price = PRICE_PER_EXTRA_BAG * Math.max(0, nonfreeBaggages - current.nonfree_baggages);
  const paymentId = String(args.payment_id);
  chargeForChange(database, current.user_id, paymentId, price);
  const reservation = database.editReservation(current.reservation_id) as Reservation;
  reservation.total_baggages = totalBaggages;
  reservation.nonfree_baggages = nonfreeBaggages;
  if (price !== 0) reservation.payment_history.push({ payment_id: paymentId, amount: price });
  return reservation;
};

const updateReservationFlights: AirlineOperation = (database, args) => {
  const current = requireReservation(database, args.reservation_id);
  const cabin = args.cabin as Cabin;
  const passengerCount = current.passengers.length;
  const segments = (args.flights as FlightSegmentArgument[]).map((segment) => {
    const kept = current.flights.find((existing) => existing.flight_number === segment.flight_number && existing.date === segment.date);
    // A segment kept in the same cabin keeps its old price and is not checked again (as recorded).
    if (kept !== undefined && cabin === current.cabin) {
      return { ...segment, price: kept.price, origin: kept.origin, destination: kept.destination } as ReservationFlight;
    }
    return priceSegment(database, segment, cabin, passengerCount);
  });
  const newTotal = segments.reduce((sum, segment) => sum + segment.price, 0) * passengerCount;
  const oldTotal = current.flights.reduce((sum, segment) => sum + segment.price, 0) * passengerCount;
  const difference = newTotal - oldTotal;
  const paymentId = String(args.payment_id);
  chargeForChange(database, current.user_id, paymentId, difference);
  const reservation = database.editReservation(current.reservation_id) as Reservation;
  reservation.flights = segments;
  if (difference !== 0) reservation.payment_history.push({ payment_id: paymentId, amount: difference });
  return reservation;
};

const updateReservationPassengers: AirlineOperation = (database, args) => {
  const current = requireReservation(database, args.reservation_id);
  const passengers = args.passengers as Passenger[];
  if (passengers.length !== current.passengers.length) {
    throw airlineRefusal('precondition', 'PASSENGER_COUNT_MISMATCH', 'number of passengers does not match');
  }
  const reservation = database.editReservation(current.reservation_id) as Reservation;
  reservation.passengers = passengers.map((passenger) => ({ first_name: passenger.first_name, last_name: passenger.last_name, dob: passenger.dob }));
  return reservation;
};

/** The 14 tools by name. */
export const airlineOperations: Readonly<Record<AirlineToolName, AirlineOperation>> = {
  book_reservation: bookReservation,
  calculate,
  cancel_reservation: cancelReservation,
  get_reservation_details: getReservationDetails,
  get_user_details: getUserDetails,
  list_all_airports: listAllAirports,
  search_direct_flight: searchDirectFlight,
  search_onestop_flight: searchOnestopFlight,
  send_certificate: sendCertificate,
  think,
  transfer_to_human_agents: transferToHumanAgents,
  update_reservation_baggages: updateReservationBaggages,
  update_reservation_flights: updateReservationFlights,
  update_reservation_passengers: updateReservationPassengers,
};

/** True when `name` is one of the 14 airline tools. */
export function isAirlineToolName(name: string): name is AirlineToolName {
  return (AIRLINE_TOOL_NAMES as readonly string[]).includes(name);
}
