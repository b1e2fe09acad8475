import type { MessageFailureEntry, ResumableEntry } from '../ground/dead-letter-entries.ts';
import { metrics, ValueType, type Attributes, type Meter } from '@opentelemetry/api';
import { systemClock, type Clock } from '../ground/ports/clock.ts';
import { createRedactor, type Redactor } from '../core/redact.ts';
import type { DeadLetterQueue } from '../ground/ports/stores.ts';
import type { ToolCallRecord } from '../core/tool-call-record.ts';
import { readDeadLetterMetrics } from '../worker/dead-letter-metrics.ts';
import {
  ERROR_TYPE,
  GEN_AI_OPERATION_NAME,
  GEN_AI_TOOL_NAME,
  METRIC_NAMES,
  TOOLRUN_BREAKER_SCOPE,
  TOOLRUN_DLQ_QUEUE,
  TOOLRUN_DLQ_REASON,
  TOOLRUN_FAILURE_TYPE,
  TOOLRUN_RETRY_REASON,
  TOOLRUN_RUN_STATUS,
  TOOLRUN_STATUS,
} from './attribute-names.ts';
import { metricToolName, UNKNOWN_TOOL_LABEL } from './failure-record.ts';
import type { ToolrunObservation, ToolrunObserver } from './observation.ts';

/** The two dead-letter queues, read for the depth and oldest-age gauges (a `Stores` bundle fits). */
export interface DeadLetterQueuesToObserve {
  messageDlq: DeadLetterQueue<MessageFailureEntry>;
  toolDlq: DeadLetterQueue<ResumableEntry>;
}

/** Options of {@link createToolrunMetrics}. */
export interface ToolrunMetricsOptions {
  /** @defaultValue `metrics.getMeter('toolrun')` (a no-op until an SDK is registered) */
  meter?: Meter;
  /** The DLQs behind `toolrun.dlq.depth` and `toolrun.dlq.oldest_age`; without them those gauges report nothing. */
  stores?: DeadLetterQueuesToObserve;
  /** Clock of the oldest-entry age. @defaultValue the system clock */
  clock?: Clock;
  /** Checks that a label value is not secret-looking. Pass the runtime's. @defaultValue `createRedactor()` */
  redactor?: Redactor;
}

/**
 * The toolrun metrics, on an OpenTelemetry meter:
 * - `gen_ai.execute_tool.duration` (histogram, s): `gen_ai.operation.name`, `gen_ai.tool.name`, `error.type` on failure;
 * - `toolrun.tool.calls` (counter): `gen_ai.tool.name`, `toolrun.status`, `toolrun.failure.type`, `error.type`
 *   — failure rate per tool and the failure-type distribution;
 * - `toolrun.tool.retries` (counter): in-band retries by `gen_ai.tool.name`, `toolrun.retry.reason`, `error.type`;
 * - `toolrun.breaker.openings` (counter): `gen_ai.tool.name`, `toolrun.breaker.scope` (`session` | `shared`);
 * - `toolrun.recovery.rounds` (histogram, steps from a failure to the next success of the run): `gen_ai.tool.name` of the failed tool;
 * - `toolrun.runs` (counter): `toolrun.run.status`;
 * - `toolrun.dlq.entries_added` (counter): `toolrun.dlq.queue`, `toolrun.dlq.reason`;
 * - `toolrun.dlq.depth` and `toolrun.dlq.oldest_age` (observable gauges, entries and s; 0 for an empty
 *   queue): `toolrun.dlq.queue`, read at each collection with `readDeadLetterMetrics` (the same numbers
 *   as `toolrun stats`: the age counts from the entry's `firstSeenAt`/`receivedAt`); a store that
 *   fails to answer reports nothing that time.
 *
 * Labels are low-cardinality and never carry a secret: registered tool names (`unknown` for a name
 * the model invented, also in breaker and recovery series), statuses, failure types and codes,
 * retry reasons, scopes, queue names and the fixed dead-letter reasons. A label value that is not
 * short identifier text (at most 64 of `A-Z a-z 0-9 _ . : -`) or that the redactor would change is
 * reported as `other` (`unknown` for a tool name). Never throws.
 */
export interface ToolrunMetrics extends ToolrunObserver {
  /** Pass as the runtime's `onCallEnd` when used alone. */
  onCallEnd(record: ToolCallRecord): void;
}

const DURATION_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const ROUND_BUCKETS = [1, 2, 3, 4, 5, 6, 8, 10, 15, 20];
/** Dead-letter reasons that may become labels (others are reported as `other`). */
const DLQ_REASON = /^[A-Za-z0-9_.-]{1,64}$/;
/** What any label value must look like. */
const LABEL_TEXT = /^[A-Za-z0-9_.:-]{1,64}$/;
/** Names remembered as registered or as invented (each set bounded). */
const MAX_REMEMBERED_NAMES = 10_000;

/** Creates the {@link ToolrunMetrics} instruments on `options.meter`. */
export function createToolrunMetrics(options: ToolrunMetricsOptions = {}): ToolrunMetrics {
  const meter = options.meter ?? metrics.getMeter('toolrun');
  const clock = options.clock ?? systemClock;
  const redactor = options.redactor ?? createRedactor();
  const plainLabels = new Map<string, boolean>();
  const isPlainLabel = (value: string): boolean => {
    if (value.length > 64) return false;
    let plain = plainLabels.get(value);
    if (plain === undefined) {
      plain = LABEL_TEXT.test(value) && redactor.text(value) === value;
      if (plainLabels.size < MAX_REMEMBERED_NAMES) plainLabels.set(value, plain);
    }
    return plain;
  };
  const label = (value: string, fallback = 'other') => (isPlainLabel(value) ? value : fallback);
  // Tool names seen on calls: registered ones, and names the model invented (TOOL_NOT_FOUND).
  const registered = new Set<string>();
  const invented = new Set<string>();
  const toolLabel = (name: string) => (registered.has(name) ? name : invented.has(name) ? UNKNOWN_TOOL_LABEL : label(name, UNKNOWN_TOOL_LABEL));
  const duration = meter.createHistogram(METRIC_NAMES.toolDuration, {
    description: 'Duration of tool calls, retries and waits included',
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS_SECONDS },
  });
  const calls = meter.createCounter(METRIC_NAMES.toolCalls, {
    description: 'Tool calls by tool, status and failure type',
    unit: '{call}',
    valueType: ValueType.INT,
  });
  const retries = meter.createCounter(METRIC_NAMES.toolRetries, { description: 'In-band retries of tool calls', unit: '{retry}', valueType: ValueType.INT });
  const breakerOpenings = meter.createCounter(METRIC_NAMES.breakerOpenings, {
    description: 'Circuit breaker openings by tool and scope',
    unit: '{opening}',
    valueType: ValueType.INT,
  });
  const recoveryRounds = meter.createHistogram(METRIC_NAMES.recoveryRounds, {
    description: 'Steps from a failed tool call to the next successful one of the run',
    unit: '{step}',
    valueType: ValueType.INT,
    advice: { explicitBucketBoundaries: ROUND_BUCKETS },
  });
  const runs = meter.createCounter(METRIC_NAMES.runs, { description: 'Agent runs by final status', unit: '{run}', valueType: ValueType.INT });
  const deadLetterAdded = meter.createCounter(METRIC_NAMES.deadLetterAdded, {
    description: 'Dead-letter entries added',
    unit: '{entry}',
    valueType: ValueType.INT,
  });

  const stores = options.stores;
  if (stores) {
    const depth = meter.createObservableGauge(METRIC_NAMES.deadLetterDepth, {
      description: 'Entries in the dead-letter queue',
      unit: '{entry}',
      valueType: ValueType.INT,
    });
    const oldestAge = meter.createObservableGauge(METRIC_NAMES.deadLetterOldestAge, { description: 'Age of the oldest dead-letter entry', unit: 's' });
    meter.addBatchObservableCallback(
      async (result) => {
        try {
          const state = await readDeadLetterMetrics(stores, { clock });
          for (const queue of ['message', 'tool'] as const) {
            result.observe(depth, state[queue].depth, { [TOOLRUN_DLQ_QUEUE]: queue });
            result.observe(oldestAge, (state[queue].oldestAgeMs ?? 0) / 1000, { [TOOLRUN_DLQ_QUEUE]: queue });
          }
        } catch {
          // a store that cannot answer now reports nothing this collection
        }
      },
      [depth, oldestAge],
    );
  }

  // Label sets are few (tool × status × code): build each once, not per call.
  const labelSets = new Map<string, Map<string, { duration: Attributes; calls: Attributes }>>();
  let labelSetCount = 0;
  const labelsOf = (toolName: string, record: ToolCallRecord) => {
    const result = record.result;
    const code = result.status === 'failed' ? result.error.code : '';
    let byCode = labelSets.get(toolName);
    let labels = byCode?.get(code);
    if (labels === undefined) {
      labels =
        result.status === 'failed'
          ? {
              duration: { [GEN_AI_OPERATION_NAME]: 'execute_tool', [GEN_AI_TOOL_NAME]: toolName, [ERROR_TYPE]: code },
              calls: { [GEN_AI_TOOL_NAME]: toolName, [TOOLRUN_STATUS]: 'failed', [TOOLRUN_FAILURE_TYPE]: result.error.type, [ERROR_TYPE]: code },
            }
          : {
              duration: { [GEN_AI_OPERATION_NAME]: 'execute_tool', [GEN_AI_TOOL_NAME]: toolName },
              calls: { [GEN_AI_TOOL_NAME]: toolName, [TOOLRUN_STATUS]: 'success' },
            };
      if (labelSetCount < 10_000) {
        if (byCode === undefined) {
          byCode = new Map();
          labelSets.set(toolName, byCode);
        }
        byCode.set(code, labels);
        labelSetCount += 1;
      }
    }
    return labels;
  };

  // The success path in one lookup: the label sets of a registered tool's successes (its name is
  // already in `registered`, so nothing else is remembered per call).
  const successLabels = new Map<string, { duration: Attributes; calls: Attributes }>();

  const recordCall = (record: ToolCallRecord) => {
    let toolName = record.toolName;
    let labels = record.result.status === 'success' ? successLabels.get(toolName) : undefined;
    if (labels === undefined) {
      toolName = metricToolName(record);
      if (toolName !== record.toolName) {
        if (record.toolName.length <= 64 && invented.size < MAX_REMEMBERED_NAMES) invented.add(record.toolName);
      } else if (registered.size < MAX_REMEMBERED_NAMES) registered.add(toolName);
      labels = labelsOf(toolName, record);
      if (record.result.status === 'success' && registered.has(toolName) && successLabels.size < MAX_REMEMBERED_NAMES) successLabels.set(toolName, labels);
    }
    duration.record(Math.max(0, record.durationMs) / 1000, labels.duration);
    calls.add(1, labels.calls);
    const attempts = record.attempts;
    for (let index = 0; index < attempts.length - 1; index++) {
      const attempt = attempts[index]!;
      retries.add(1, { [GEN_AI_TOOL_NAME]: toolName, [TOOLRUN_RETRY_REASON]: label(attempt.retryReason ?? 'unknown'), [ERROR_TYPE]: label(attempt.outcome) });
    }
  };

  const observe = (observation: ToolrunObservation): void => {
    try {
      switch (observation.kind) {
        case 'tool-call':
          recordCall(observation.record);
          return;
        case 'recovery':
          recoveryRounds.record(observation.rounds, { [GEN_AI_TOOL_NAME]: toolLabel(observation.toolName) });
          return;
        case 'breaker-open':
          breakerOpenings.add(1, { [GEN_AI_TOOL_NAME]: toolLabel(observation.toolName), [TOOLRUN_BREAKER_SCOPE]: observation.scope });
          return;
        case 'dead-letter-add':
          deadLetterAdded.add(1, {
            [TOOLRUN_DLQ_QUEUE]: observation.queue,
            [TOOLRUN_DLQ_REASON]: DLQ_REASON.test(observation.reason) ? observation.reason : 'other',
          });
          return;
        case 'run-end':
          runs.add(1, { [TOOLRUN_RUN_STATUS]: label(observation.result.status) });
          return;
        case 'worker-event':
          return;
        default: {
          const unreachable: never = observation;
          return unreachable;
        }
      }
    } catch {
      // metrics must never break a call or a run
    }
  };

  return { observe, onCallEnd: (record) => observe({ kind: 'tool-call', record, stepIndex: null }) };
}
