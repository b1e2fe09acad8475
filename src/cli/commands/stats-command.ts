import type { Command } from 'commander';
import { readDeadLetterMetrics } from '../../index.ts';
import { formatCounts, formatDurationMs, printJson, printLine } from '../format.ts';
import { addStoreOptions, type StoreOptions } from '../parse-options.ts';
import { resolveStores } from '../resolve-stores.ts';

interface StatsOptions extends StoreOptions {
  json?: boolean;
}

/** `toolrun stats`: queue size, each DLQ's depth and oldest-entry age, runs by status. */
export function addStatsCommand(program: Command): void {
  const command = program
    .command('stats')
    .description('queue size, dead-letter depth and oldest-entry age, runs by status')
    .option('--json', 'print the numbers as JSON');
  addStoreOptions(command, { queueUrl: true });
  command.action(async (options: StatsOptions) => {
    const { stores, label, countRunsByStatus } = await resolveStores({ ...options, env: process.env }, { mustExist: true });
    try {
      const [queueSize, deadLetters, runsByStatus] = await Promise.all([stores.queue.size(), readDeadLetterMetrics(stores), countRunsByStatus?.()]);
      if (options.json) {
        printJson({ store: label, queue: { size: queueSize }, deadLetters, runs: runsByStatus ?? null });
        return;
      }
      const age = (ms: number | null) => (ms === null ? '-' : formatDurationMs(ms));
      printLine(`store: ${label}`);
      printLine(`queue: ${queueSize} message${queueSize === 1 ? '' : 's'} waiting or in flight`);
      printLine(`message DLQ: ${deadLetters.message.depth} (oldest ${age(deadLetters.message.oldestAgeMs)}) — ${formatCounts(deadLetters.message.entriesByReason)}`);
      printLine(`tool DLQ: ${deadLetters.tool.depth} (oldest ${age(deadLetters.tool.oldestAgeMs)}) — ${formatCounts(deadLetters.tool.entriesByTool)}`);
      printLine(`runs: ${runsByStatus === undefined ? 'not countable on this backend' : formatCounts(runsByStatus)}`);
    } finally {
      await stores.close();
    }
  });
}
