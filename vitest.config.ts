import { defineConfig } from 'vitest/config';

/**
 * Two suites. `npm test` runs `unit`: what a contributor runs after each change (at most a few
 * minutes). `npm run test:heavy` runs `heavy`: the tests that start processes, kill them, restart
 * services, run a browser or take more than a few seconds each. CI runs both.
 *
 * A new heavy test file is named `*.heavy.test.ts` (anywhere in the tree); the files below were
 * heavy before that name existed and are sent to the heavy suite by name.
 */
const HEAVY_TESTS = [
  '**/*.heavy.test.ts',
  // worker processes killed and restarted, services restarted mid-run
  'test/chaos.test.ts',
  'test/worker-crash.test.ts',
  'test/breaker-storm.test.ts',
  'test/sqlite-step-crash.test.ts',
  'test/sqlite-group-commit-crash.test.ts',
  'test/postgres-step-crash.test.ts',
  'src/stores/sqlite/sqlite-background-checkpoint.test.ts',
  'src/stores/sqlite/sqlite-multi-process.test.ts',
  'src/stores/sqlite/sqlite-claims-multi-process.test.ts',
  // every failure scenario on every backend, each in a worker thread under a hard bound (minutes)
  'test/reliability.test.ts',
  // the main job's workload end to end, with its drain in a process of its own
  'test/airline-workload.test.ts',
  'test/airline-report.test.ts',
  'test/adapters/ai-sdk-airline.test.ts',
  // the CLI and MCP servers as child processes
  'test/cli.test.ts',
  'test/cli-failures.test.ts',
  'test/cli-observability.test.ts',
  'test/cli-redis.test.ts',
  'test/cli-operator.test.ts',
  'test/runtimes/no-eval.test.ts',
  'test/mcp-proxy.test.ts',
  'test/mcp-tools.test.ts',
  'test/mcp-storm.test.ts',
  'test/mcp-conformance.test.ts',
  'test/mcp-proxy-state.test.ts',
  'test/mcp-list-changed.test.ts',
  // a real Chromium
  'test/dashboard-browser.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'examples/**/*.test.ts'],
          exclude: [...HEAVY_TESTS, '**/node_modules/**'],
        },
      },
      { extends: true, test: { name: 'heavy', include: HEAVY_TESTS, exclude: ['**/node_modules/**'] } },
    ],
  },
});
