/** The dead-letter entry formats, defined in the ground layer (the stores' ports type their queues with them). */
export type {
  DeadLetterSink,
  MessageFailureCode,
  MessageFailureEntry,
  ModelFailureEntry,
  ResumableEntry,
  RunFailureEntry,
  ToolFailureEntry,
} from '../ground/dead-letter-entries.ts';
