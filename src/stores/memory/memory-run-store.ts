import type { RunStore } from '../../ground/ports/stores.ts';
import type { RunCheckpoint } from '../../ground/ports/run-journal.ts';
import { copyStoredValue } from './copy-stored-value.ts';

/**
 * An in-memory {@link RunStore}: the last checkpoint per run id, deep-copied on the way in and out
 * (`structuredClone`'s copy, see {@link copyStoredValue}; a value it rejects is rejected with its
 * `DataCloneError`). Unbounded: a run's checkpoint is what lets a redelivered message resume.
 */
export function createMemoryRunStore(): RunStore {
  const checkpoints = new Map<string, RunCheckpoint>();
  return {
    async get(runId) {
      return copyStoredValue(checkpoints.get(runId));
    },
    async put(checkpoint) {
      const copied = copyStoredValue(checkpoint);
      checkpoints.set(copied.runId, copied);
    },
  };
}
