import type { Command } from 'commander';
import { readDeadLetterMetrics } from '../../index.ts';
import { formatBytes, formatCounts, formatDurationMs, printJson, printLine } from '../format.ts';
import { addStoreOptions, type StoreOptions } from '../parse-options.ts';
import { DEAD_LETTERS_QUEUE_URL_HELP, resolveStores } from '../resolve-stores.ts';

interface StatsOptions extends StoreOptions {
  json?: boolean;
}

/**
 * `toolrun stats`: queue size; each DLQ's depth, stored bytes and oldest-entry age, the message
 * DLQ's entries per reason and the tool DLQ's per kind (tool / model / run), per tool and per
 * model (`readDeadLetterMetrics`); runs by status. `--json` prints the same numbers.
 */
export function addStatsCommand(program: Command): void {
  const command = program
    .command('stats')
    .description('queue size, dead-letter depth, bytes, oldest-entry age and entries by kind, runs by status')
    .option('--json', 'print the numbers as JSON');
  addStoreOptions(command, { queueUrl: false });
  command.option('--queue <url>', DEAD_LETTERS_QUEUE_URL_HELP);
  command.action(async (options: StatsOptions) => {
    const { stores, label, countRunsByStatus } = await resolveStores({ ...options, env: process.env }, { mustExist: true, deadLettersFromQueue: true });
    try {
      const [queueSize, deadLetters, runsByStatus] = await Promise.all([stores.queue.size(), readDeadLetterMetrics(stores), countRunsByStatus?.()]);
      if (options.json) {
        printJson({ store: label, queue: { size: queueSize }, deadLetters, runs: runsByStatus ?? null });
        return;
      }
      const age = (ms: number | null) => (ms === null ? '-' : formatDurationMs(ms));
      printLine(`store: ${label}`);
      printLine(`queue: ${queueSize} message${queueSize === 1 ? '' : 's'} waiting or in flight`);
      const bytes = (value: number | null) => (value === null ? 'size unknown' : formatBytes(value));
      const { message, tool } = deadLetters;
      printLine(`message DLQ: ${message.depth} (oldest ${age(message.oldestAgeMs)}) — ${formatCounts(message.entriesByReason)} · ${bytes(message.bytes)}`);
      const kinds = `kinds: tool ${tool.entriesByKind.tool}, model ${tool.entriesByKind.model}, run ${tool.entriesByKind.run}${tool.entriesByKind.unknown ? `, unknown ${tool.entriesByKind.unknown}` : ''}`;
      const models = Object.keys(tool.entriesByModel).length > 0 ? ` · models: ${formatCounts(tool.entriesByModel)}` : '';
      printLine(`tool DLQ: ${tool.depth} (oldest ${age(tool.oldestAgeMs)}) — ${formatCounts(tool.entriesByTool)} · ${kinds}${models} · ${bytes(tool.bytes)}`);
      printLine(`runs: ${runsByStatus === undefined ? 'not countable on this backend' : formatCounts(runsByStatus)}`);
    } finally {
      await stores.close();
    }
  });
}
