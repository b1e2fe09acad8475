import { afterEach, beforeEach } from 'vitest';
import type { Clock } from '../../ground/ports/clock.ts';
import type { Stores } from '../../ground/ports/stores.ts';

/** The part of a fake clock the contract suites drive: time that moves only when told. */
export type FakeClockLike = Clock & {
  /** Moves time forward by `ms` milliseconds (see `createFakeClock`). */
  advance(ms: number): Promise<void>;
};

/** What a backend's factory hands the contract suites for one test. */
export interface StoresContractHarness {
  /** Fresh, empty stores built with `clock`. */
  stores: Stores;
  /** The clock the stores read; the suites advance it to test TTLs and leases. */
  clock: FakeClockLike;
  /** Closes the stores and removes whatever the factory created (files, schemas, keys). */
  cleanup(): Promise<void>;
  /**
   * The conversation TTL the stores were built with, in ms.
   * @defaultValue 7 days (the default of every toolrun backend)
   */
  conversationTtlMs?: number;
}

/** Builds a fresh harness; called once before every test of a contract suite. */
export type MakeStores = () => Promise<StoresContractHarness>;

/**
 * Registers `beforeEach`/`afterEach` hooks in the current `describe` that build a fresh harness
 * per test and clean it up afterwards; returns a getter for the current harness.
 */
export function useStoresHarness(makeStores: MakeStores): () => StoresContractHarness {
  let current: StoresContractHarness | undefined;
  beforeEach(async () => {
    current = await makeStores();
  });
  afterEach(async () => {
    const harness = current;
    current = undefined;
    await harness?.cleanup();
  });
  return () => {
    if (current === undefined) throw new Error('the stores harness is only available inside a test');
    return current;
  };
}
