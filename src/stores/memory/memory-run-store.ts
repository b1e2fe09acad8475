import type { RunCheckpoint, RunStore } from '../../ground/ports/stores.ts';

/**
 * An in-memory {@link RunStore}: the last checkpoint per run id, deep-copied (`structuredClone`)
 * on the way in and out. Unbounded: a run's checkpoint is what lets a redelivered message resume.
 */
export function createMemoryRunStore(): RunStore {
  const checkpoints = new Map<string, RunCheckpoint>();
  return {
    async get(runId) {
      const checkpoint = checkpoints.get(runId);
      return checkpoint === undefined ? undefined : structuredClone(checkpoint);
    },
    async put(checkpoint) {
      checkpoints.set(checkpoint.runId, structuredClone(checkpoint));
    },
  };
}
