/**
 * Shapes of the τ-bench airline database records (`airline-db/*.json`), as found in the data.
 * Key order matters: the tools serialise records in insertion order, like Python dicts.
 */

/** Cabin classes, cheapest first. */
export type Cabin = 'basic_economy' | 'economy' | 'business';

/** Per-cabin numbers (seats left, or prices in whole dollars). */
export type PerCabin = Record<Cabin, number>;

/** One date of a flight: `available` carries seats and prices; other statuses carry times. */
export type FlightDate =
  | { status: 'available'; available_seats: PerCabin; prices: PerCabin }
  | { status: 'landed' | 'cancelled' | 'on time' | 'flying' | 'delayed'; [time: string]: string };

/** A scheduled flight and its state on each date (`YYYY-MM-DD`). */
export interface Flight {
  flight_number: string;
  origin: string;
  destination: string;
  /** `HH:MM:SS`. */
  scheduled_departure_time_est: string;
  /** `HH:MM:SS`, with `+1` when it lands the next day. */
  scheduled_arrival_time_est: string;
  dates: Record<string, FlightDate>;
}

/** A flight segment of a reservation (stored order: origin, destination, flight_number, date, price). */
export interface ReservationFlight {
  origin: string;
  destination: string;
  flight_number: string;
  date: string;
  /** Price per passenger in whole dollars. */
  price: number;
}

/** A passenger of a reservation or a saved passenger of a user. */
export interface Passenger {
  first_name: string;
  last_name: string;
  /** `YYYY-MM-DD`. */
  dob: string;
}

/** One payment (positive) or refund (negative) on a reservation, in dollars. */
export interface Payment {
  payment_id: string;
  amount: number;
}

/** A reservation record. `status` is only present once it was cancelled. */
export interface Reservation {
  reservation_id: string;
  user_id: string;
  origin: string;
  destination: string;
  flight_type: 'one_way' | 'round_trip';
  cabin: Cabin;
  flights: ReservationFlight[];
  passengers: Passenger[];
  payment_history: Payment[];
  /** `YYYY-MM-DDTHH:MM:SS` (EST). */
  created_at: string;
  total_baggages: number;
  nonfree_baggages: number;
  insurance: 'yes' | 'no';
  status?: 'cancelled';
}

/** A stored payment method of a user. */
export type PaymentMethod =
  { source: 'credit_card'; brand: string; last_four: string; id: string } | { source: 'gift_card' | 'certificate'; amount: number; id: string };

/** A user record. */
export interface User {
  name: { first_name: string; last_name: string };
  address: Record<string, string>;
  email: string;
  dob: string;
  payment_methods: Record<string, PaymentMethod>;
  saved_passengers: Passenger[];
  membership: 'regular' | 'silver' | 'gold';
  reservations: string[];
}
