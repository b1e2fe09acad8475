// Worker-thread entry of runBounded: loads a TypeScript module through tsx, calls one export with
// the input, and posts back the result (or the error). The parent kills this thread on overrun.
// It says when the module has loaded, so a bound that follows progress starts from there.
import { parentPort, workerData } from 'node:worker_threads';
import { tsImport } from 'tsx/esm/api';

const { moduleUrl, exportName, input } = workerData;
try {
  const module = await tsImport(moduleUrl, import.meta.url);
  const fn = module[exportName];
  if (typeof fn !== 'function') throw new TypeError(`${moduleUrl} has no function export ${exportName}`);
  parentPort.postMessage({ type: 'loaded' });
  const startedAt = globalThis.performance.now();
  const value = await fn(input);
  parentPort.postMessage({
    ok: true,
    value,
    elapsedMs: globalThis.performance.now() - startedAt,
    steps: globalThis[Symbol.for('toolrun.test.boundedSteps')] ?? 0,
  });
} catch (error) {
  parentPort.postMessage({ ok: false, reason: 'error', message: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
}
