import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { isOverIdBound, MAX_ID_BYTES } from '../../ground/identifier-bound.ts';
import { checkRunRequestBody } from '../../worker/parse-run-request.ts';
import { usageError, warn } from '../cli-error.ts';
import { printJson, printLine } from '../format.ts';
import { addInitOption, addStoreOptions, type StoreOptions } from '../parse-options.ts';
import { resolveStores, writerContext } from '../resolve-stores.ts';

interface EnqueueCommandOptions extends StoreOptions {
  init?: boolean;
  file?: string;
  id?: string;
  jsonl?: boolean;
  validate: boolean;
  json?: boolean;
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw usageError('no message body: pass BODY, --file FILE, or pipe it on stdin');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function readInput(body: string | undefined, options: EnqueueCommandOptions): Promise<{ text: string; source: string }> {
  if (body !== undefined && options.file !== undefined) throw usageError('pass the body as an argument or with --file, not both');
  if (body !== undefined) return { text: body, source: 'the body argument' };
  if (options.file !== undefined && options.file !== '-') {
    try {
      return { text: readFileSync(options.file, 'utf8'), source: options.file };
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : error instanceof Error ? error.message : String(error);
      throw usageError(`cannot read ${options.file}: ${reason}`, 'NOT_FOUND');
    }
  }
  return { text: await readStdin(), source: 'stdin' };
}

/**
 * `toolrun enqueue`: adds run-request messages to the queue. An id the queue had before (waiting,
 * in flight or done) is not enqueued again: the command says so on stderr (a warning, exit code 0)
 * and lists only the ids it enqueued on stdout (`--json`: `ids`, plus `alreadyEnqueued` when some
 * were). The database is created only at the default path or with `--init`.
 */
export function addEnqueueCommand(program: Command): void {
  const command = program
    .command('enqueue')
    .description('add a run request to the queue (the body from the argument, --file, or stdin)')
    .argument('[body]', 'the message body, JSON such as {"input": "..."}')
    .option('--file <file>', 'read the body from a file (- for stdin)')
    .option('--id <id>', 'message id (enqueuing an existing id does nothing); with --jsonl, a prefix: ID-1, ID-2…')
    .option('--jsonl', 'one message per non-empty line')
    .option('--no-validate', 'enqueue bodies that are not valid run requests (they go to the message DLQ)')
    .option('--json', 'print the ids as JSON');
  addStoreOptions(command, { queueUrl: true });
  addInitOption(command);
  command.action(async (body: string | undefined, options: EnqueueCommandOptions) => {
    if (options.id !== undefined && options.id.trim() === '') throw usageError('--id needs a non-empty message id (omit --id for a generated one)');
    if (options.id !== undefined && isOverIdBound(options.id)) throw usageError(`--id needs a message id of at most ${MAX_ID_BYTES} UTF-8 bytes`);
    const { text, source } = await readInput(body, options);
    const lines = options.jsonl
      ? text
          .split(/\r?\n/)
          .map((line, index) => ({ line, number: index + 1 }))
          .filter(({ line }) => line.trim() !== '')
      : [{ line: text, number: 0 }];
    if (lines.length === 0) throw usageError(`no message in ${source}`, 'BAD_INPUT');
    if (options.id !== undefined && options.jsonl && isOverIdBound(`${options.id}-${lines.at(-1)!.number}`)) {
      throw usageError(`--id with --jsonl is the prefix of the ids ID-1 … ID-${lines.at(-1)!.number}, each at most ${MAX_ID_BYTES} UTF-8 bytes: shorten --id`);
    }
    if (options.validate) {
      for (const { line, number } of lines) {
        const problem = checkRunRequestBody(line);
        if (problem !== undefined) {
          throw usageError(
            `${options.jsonl ? `${source} line ${number}` : source} is ${problem}; nothing was enqueued (--no-validate enqueues it anyway)`,
            'BAD_INPUT',
          );
        }
      }
    }
    const location = { ...options, env: process.env };
    const { stores, findMessageIds } = await resolveStores(location, writerContext(location, options.init));
    const ids: string[] = [];
    const alreadyEnqueued: string[] = [];
    try {
      const messages = lines.map(({ line, number }) => ({
        body: line,
        id: options.id === undefined ? undefined : options.jsonl ? `${options.id}-${number}` : options.id,
      }));
      const given = messages.flatMap((message) => (message.id !== undefined ? [message.id] : []));
      // the queue makes an existing id a no-op without saying so: ask the backend first
      const existing = given.length > 0 && findMessageIds ? await findMessageIds(given) : new Set<string>();
      for (const message of messages) {
        if (message.id !== undefined && existing.has(message.id)) {
          alreadyEnqueued.push(message.id);
          continue;
        }
        ids.push(await stores.queue.enqueue({ body: message.body, ...(message.id !== undefined ? { id: message.id } : {}) }));
      }
    } finally {
      await stores.close();
    }
    if (alreadyEnqueued.length > 0) {
      const shown = alreadyEnqueued.slice(0, 5).join(', ') + (alreadyEnqueued.length > 5 ? ', …' : '');
      warn(
        `${alreadyEnqueued.length === 1 ? `message id ${shown} was` : `${alreadyEnqueued.length} message ids (${shown}) were`} enqueued before (the queue never takes an id twice): nothing was done for ${alreadyEnqueued.length === 1 ? 'it' : 'them'}`,
      );
    }
    if (options.json) printJson({ ids, ...(alreadyEnqueued.length > 0 ? { alreadyEnqueued } : {}) });
    else for (const id of ids) printLine(id);
  });
}
