import { beforeAll, describe, expect, it } from 'vitest';
import { hasSharedData } from '../examples/shared-data.ts';
import { replayTrajectories, type ReplaySummary } from '../examples/airline/replay.ts';
import { loadAirlineTrajectories } from '../examples/airline/trajectories.ts';

const dataPresent = hasSharedData('tau-bench', 'gpt-4o-airline.trajectories.json') && hasSharedData('tau-bench', 'airline-db', 'users.json');

describe.skipIf(!dataPresent)('τ-bench airline: replaying every recorded tool call against the TypeScript tools', () => {
  let recordedEra: ReplaySummary;
  let shippedEra: ReplaySummary;
  beforeAll(() => {
    recordedEra = replayTrajectories(loadAirlineTrajectories(), { era: 'recorded' });
    shippedEra = replayTrajectories(loadAirlineTrajectories(), { era: 'shipped' });
  });

  it('reproduces every recorded reply against the data version the trajectories were recorded with', () => {
    expect(recordedEra.callsTotal).toBe(1164);
    expect(recordedEra.trajectoriesTotal).toBe(200);
    // measured: 1164 / 1164 calls, 200 / 200 trajectories
    expect(recordedEra.callsMatched).toBeGreaterThanOrEqual(1164);
    expect(recordedEra.trajectoriesMatched).toBeGreaterThanOrEqual(200);
  });

  it('differs from the shipped database only where users.json renamed the address key province → state', () => {
    // measured: 1044 / 1164 calls, 80 / 200 trajectories
    expect(shippedEra.callsMatched).toBeGreaterThanOrEqual(1044);
    expect(shippedEra.trajectoriesMatched).toBeGreaterThanOrEqual(80);
    const mismatches = shippedEra.calls.filter((call) => !call.matched);
    const userDetailCalls = shippedEra.calls.filter((call) => call.toolName === 'get_user_details');
    // The explained mismatches, exactly: every get_user_details call and nothing else.
    expect(mismatches.map((call) => `${call.trajectoryKey}#${call.callIndex}`)).toEqual(
      userDetailCalls.map((call) => `${call.trajectoryKey}#${call.callIndex}`),
    );
    expect(mismatches).toHaveLength(120);
    for (const call of mismatches) {
      expect(call.replayedReply).not.toBe(call.recordedReply);
      expect(call.replayedReply.replace('"state": ', '"province": ')).toBe(call.recordedReply);
    }
  });

  it('reproduces the 73 recorded Error replies as refusals, by tool', () => {
    const errors = recordedEra.calls.filter((call) => call.recordedReply.startsWith('Error'));
    expect(errors).toHaveLength(73);
    expect(errors.every((call) => call.matched)).toBe(true);
    const byTool: Record<string, number> = {};
    for (const call of errors) byTool[call.toolName] = (byTool[call.toolName] ?? 0) + 1;
    expect(byTool).toEqual({ book_reservation: 30, update_reservation_flights: 42, update_reservation_baggages: 1 });
  });
});
