import { Command } from 'commander';
import { addDashboardCommand } from './commands/dashboard-command.ts';
import { addDlqCommand } from './commands/dlq-command.ts';
import { addEvalCommand } from './commands/eval-command.ts';
import { addEnqueueCommand } from './commands/enqueue-command.ts';
import { addMcpProxyCommand } from './commands/mcp-proxy-command.ts';
import { addMetricsCommand } from './commands/metrics-command.ts';
import { addReportCommand } from './commands/report-command.ts';
import { addStatsCommand } from './commands/stats-command.ts';
import { addWorkerCommand } from './commands/worker-command.ts';

/**
 * The `toolrun` command line: `worker`, `enqueue`, `dlq list|show|replay|drain|purge|redrive`,
 * `stats`, `report`, `metrics`, `mcp-proxy`, `dashboard`, `eval`.
 * Commander errors are thrown (`exitOverride`), not exited on, so the entry decides exit codes.
 */
export function createProgram(): Command {
  const program = new Command('toolrun')
    .description('Run agents from a queue and work off their dead-letter queues (toolrun).')
    .version('0.1.0')
    .exitOverride()
    // a subcommand's options belong to it, so `mcp-proxy` can pass `npx -y server` through verbatim
    .enablePositionalOptions()
    .showSuggestionAfterError(true)
    .configureOutput({ outputError: (text, write) => write(`toolrun: ${text.trim().replace(/\s*\n\s*/g, ' ')}\n`) });
  addWorkerCommand(program);
  addEnqueueCommand(program);
  addDlqCommand(program);
  addStatsCommand(program);
  addReportCommand(program);
  addMetricsCommand(program);
  addMcpProxyCommand(program);
  addDashboardCommand(program);
  addEvalCommand(program);
  return program;
}
