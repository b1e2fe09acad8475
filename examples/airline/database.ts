/**
 * The τ-bench airline database: the initial state every trajectory starts from, loaded once from
 * `../shared/data/tau-bench/airline-db/`, and a cheap fresh copy of it per run.
 *
 * A full deep copy (`structuredClone`) of the 5 MB database costs about 80 ms, which is 80 s for a
 * thousand runs; instead each run gets a copy-on-write view: reads see the shared, deep-frozen
 * initial records until the run edits one, and the first edit clones only that record. Creating a
 * view costs microseconds.
 */
import { readSharedJson } from '../shared-data.ts';
import type { Flight, Reservation, User } from './airline-types.ts';

/** The three tables, keyed by flight number, reservation id and user id (file order kept). */
export interface AirlineTables {
  flights: Record<string, Flight>;
  reservations: Record<string, Reservation>;
  users: Record<string, User>;
}

/** Which table a record lives in. */
export type AirlineTableName = keyof AirlineTables;

/**
 * One run's private view of the airline database. Records returned by `get*` and `flights()` are
 * read-only (deep-frozen when unchanged); call `edit*` to get a private, mutable copy of a record.
 * Not safe to share between runs; each run gets its own from {@link createAirlineDatabase}.
 */
export interface AirlineDatabase {
  getFlight(flightNumber: string): Readonly<Flight> | undefined;
  getUser(userId: string): Readonly<User> | undefined;
  getReservation(reservationId: string): Readonly<Reservation> | undefined;
  /** Every flight in the order of `flights.json`. */
  flights(): Iterable<Readonly<Flight>>;
  /** A mutable copy of the flight, private to this database (cloned on first edit). */
  editFlight(flightNumber: string): Flight | undefined;
  editUser(userId: string): User | undefined;
  editReservation(reservationId: string): Reservation | undefined;
  /** Inserts or replaces a reservation. */
  putReservation(reservation: Reservation): void;
  /** Ids of the records this run changed or added, per table. */
  changedRecords(): Record<AirlineTableName, string[]>;
  /** A full, independent, mutable copy of the current state (slow: about 80 ms). */
  snapshot(): AirlineTables;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

/**
 * Which version of the data to serve.
 * - `shipped`: the database files exactly as pinned (commit 59a200c).
 * - `recorded`: the same, with the one schema difference of the version the trajectories were
 *   recorded against undone: user addresses name the region `province` (the pinned files say
 *   `state`; same position, same values). With it, every recorded reply is reproduced.
 */
export type AirlineDataEra = 'shipped' | 'recorded';

const initialTables = new Map<AirlineDataEra, Readonly<AirlineTables>>();

function renameAddressStateToProvince(users: Record<string, User>): Record<string, User> {
  for (const user of Object.values(users)) {
    const address: Record<string, string> = {};
    for (const [key, value] of Object.entries(user.address)) address[key === 'state' ? 'province' : key] = value;
    user.address = address;
  }
  return users;
}

/**
 * The initial database of an era (default `shipped`), read and deep-frozen on first use and shared
 * afterwards.
 *
 * @throws Error naming the missing file and how to provide it when the shared data is absent.
 */
export function loadInitialAirlineTables(era: AirlineDataEra = 'shipped'): Readonly<AirlineTables> {
  let tables = initialTables.get(era);
  if (tables === undefined) {
    const users = readSharedJson<Record<string, User>>('tau-bench', 'airline-db', 'users.json');
    tables = deepFreeze({
      flights: readSharedJson<Record<string, Flight>>('tau-bench', 'airline-db', 'flights.json'),
      reservations: readSharedJson<Record<string, Reservation>>('tau-bench', 'airline-db', 'reservations.json'),
      users: era === 'recorded' ? renameAddressStateToProvince(users) : users,
    });
    initialTables.set(era, tables);
  }
  return tables;
}

class CopyOnWriteTable<Row> {
  private readonly changed = new Map<string, Row>();
  constructor(private readonly base: Readonly<Record<string, Row>>) {}

  get(id: string): Row | undefined {
    return this.changed.get(id) ?? (Object.hasOwn(this.base, id) ? this.base[id] : undefined);
  }

  edit(id: string): Row | undefined {
    const own = this.changed.get(id);
    if (own !== undefined) return own;
    if (!Object.hasOwn(this.base, id)) return undefined;
    const copy = structuredClone(this.base[id]) as Row;
    this.changed.set(id, copy);
    return copy;
  }

  put(id: string, row: Row): void {
    this.changed.set(id, row);
  }

  *values(): Iterable<Row> {
    for (const id of Object.keys(this.base)) yield this.get(id) as Row;
    for (const [id, row] of this.changed) if (!Object.hasOwn(this.base, id)) yield row;
  }

  changedIds(): string[] {
    return [...this.changed.keys()];
  }

  snapshot(): Record<string, Row> {
    const copy: Record<string, Row> = {};
    for (const id of Object.keys(this.base)) copy[id] = structuredClone(this.get(id) as Row);
    for (const [id, row] of this.changed) if (!Object.hasOwn(this.base, id)) copy[id] = structuredClone(row);
    return copy;
  }
}

/** Options of {@link createAirlineDatabase}. */
export interface AirlineDatabaseOptions {
  /** Which data version to start from. @defaultValue 'shipped' */
  era?: AirlineDataEra;
  /** The initial state to use instead of the shared data (tests). Must not be mutated afterwards. */
  tables?: Readonly<AirlineTables>;
}

/**
 * A fresh database for one run: the initial state, with copy-on-write per record (creating one
 * costs microseconds; the first edit of a record clones that record only).
 *
 * @throws Error when the shared data is absent and no `tables` were given.
 */
export function createAirlineDatabase(options: AirlineDatabaseOptions = {}): AirlineDatabase {
  const tables = options.tables ?? loadInitialAirlineTables(options.era ?? 'shipped');
  const flights = new CopyOnWriteTable<Flight>(tables.flights);
  const users = new CopyOnWriteTable<User>(tables.users);
  const reservations = new CopyOnWriteTable<Reservation>(tables.reservations);
  return {
    getFlight: (flightNumber) => flights.get(flightNumber),
    getUser: (userId) => users.get(userId),
    getReservation: (reservationId) => reservations.get(reservationId),
    flights: () => flights.values(),
    editFlight: (flightNumber) => flights.edit(flightNumber),
    editUser: (userId) => users.edit(userId),
    editReservation: (reservationId) => reservations.edit(reservationId),
    putReservation: (reservation) => reservations.put(reservation.reservation_id, reservation),
    changedRecords: () => ({ flights: flights.changedIds(), users: users.changedIds(), reservations: reservations.changedIds() }),
    snapshot: () => ({ flights: flights.snapshot(), users: users.snapshot(), reservations: reservations.snapshot() }),
  };
}
