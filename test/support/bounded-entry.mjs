// Worker-thread entry of runBounded: loads a TypeScript module through tsx, calls one export with
// the input, and posts back the result (or the error). The parent kills this thread on overrun.
import { parentPort, workerData } from 'node:worker_threads';
import { tsImport } from 'tsx/esm/api';

const { moduleUrl, exportName, input } = workerData;
try {
  const module = await tsImport(moduleUrl, import.meta.url);
  const fn = module[exportName];
  if (typeof fn !== 'function') throw new TypeError(`${moduleUrl} has no function export ${exportName}`);
  const startedAt = globalThis.performance.now();
  const value = await fn(input);
  parentPort.postMessage({ ok: true, value, elapsedMs: globalThis.performance.now() - startedAt });
} catch (error) {
  parentPort.postMessage({ ok: false, reason: 'error', message: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
}
