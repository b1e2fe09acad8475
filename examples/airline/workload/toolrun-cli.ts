/**
 * Runs the `toolrun` command as a user does in development (`node --import tsx src/cli/index.ts …`
 * in the project root), in its own process: the demo's drain and failure report go through it.
 */
import { spawn } from 'node:child_process';

/** Options of {@link spawnToolrun}. */
export interface SpawnToolrunOptions {
  projectRoot: string;
  /** The child's environment. */
  env: Record<string, string | undefined>;
  /** The child is killed (by its pid) after this long. @defaultValue 120_000 */
  timeoutMs?: number;
}

/** What the command did: its exit code and what it printed. */
export interface ToolrunProcessResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** stdout and stderr, in order of arrival. */
  output: string;
}

/**
 * Runs `toolrun <args>` and waits for it to exit. A non-zero exit code is data, not a throw; a
 * child still running after `timeoutMs` is killed and its exit code is 128.
 *
 * @throws when the child process cannot be started at all.
 */
export function spawnToolrun(args: readonly string[], options: SpawnToolrunOptions): Promise<ToolrunProcessResult> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], {
      cwd: options.projectRoot,
      env: options.env as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      output += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      output += chunk.toString('utf8');
    });
    const timer = setTimeout(() => {
      output += `\n[killed after ${timeoutMs} ms]`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ exitCode: code ?? (signal ? 128 : 1), stdout, stderr, output });
    });
  });
}
