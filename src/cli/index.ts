/**
 * The `toolrun` command (bin/toolrun.js runs the built copy; in development:
 * `node --import tsx src/cli/index.ts …`). It uses the public API only, like any user.
 *
 * Exit codes, the same for every command: 0 done; 1 a runtime failure (a store or port that cannot
 * be opened, a replay that failed again, a store error during a drain); 2 a usage error (unknown
 * option or id, a missing database or file, a file that is not what it should be, bad JSON,
 * missing or invalid config, unsupported backend). Errors are one line, `toolrun: error: …`;
 * `TOOLRUN_DEBUG=1` adds the stack. See docs/cli.md.
 */
import { runToolrun } from './main.ts';

// A reader that goes away (`toolrun dlq list | head -1`) is not an error of the command: what is
// left to print is dropped and the command finishes its work (a worker keeps its runs) and exits
// as it would have. Any other output error is one line, as every error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return;
    process.exitCode = 1;
    if (stream !== process.stderr) process.stderr.write(`toolrun: error: cannot write the output: ${error.message}\n`);
  });
}

process.exitCode = await runToolrun(process.argv);
