import type { RunCheckpoint, RunStore } from '../../ground/ports/stores.ts';
import { copyStoredValue } from './copy-stored-value.ts';

/** The run stores made by {@link createMemoryRunStore}, each with its write of a checkpoint already copied. */
const checkpointWriters = new WeakMap<RunStore, (copied: RunCheckpoint) => void>();

/**
 * The write of `runs` (made by {@link createMemoryRunStore}) that stores a checkpoint the caller
 * has already deep-copied and will not touch again, as `put` would store it; `undefined` for any
 * other run store. For the memory conversation store's `commitStep`, which copies every value of a
 * step before it writes any.
 */
export function memoryCheckpointWriter(runs: RunStore): ((copied: RunCheckpoint) => void) | undefined {
  return checkpointWriters.get(runs);
}

/**
 * An in-memory {@link RunStore}: the last checkpoint per run id, deep-copied on the way in and out
 * (`structuredClone`'s copy, see {@link copyStoredValue}; a value it rejects is rejected with its
 * `DataCloneError`). Unbounded: a run's checkpoint is what lets a redelivered message resume.
 */
export function createMemoryRunStore(): RunStore {
  const checkpoints = new Map<string, RunCheckpoint>();
  const write = (copied: RunCheckpoint) => {
    checkpoints.set(copied.runId, copied);
  };
  const store: RunStore = {
    async get(runId) {
      const checkpoint = checkpoints.get(runId);
      return checkpoint === undefined ? undefined : copyStoredValue(checkpoint);
    },
    async put(checkpoint) {
      write(copyStoredValue(checkpoint));
    },
  };
  checkpointWriters.set(store, write);
  return store;
}
