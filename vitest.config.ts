import { defineConfig } from 'vitest/config';

/** The tests that run real worker processes, kill them and restart services: slow, run on their own. */
const PROCESS_TESTS = [
  'test/chaos.test.ts',
  'test/worker-crash.test.ts',
  'test/breaker-storm.test.ts',
  'test/mcp-proxy.test.ts',
  'test/mcp-tools.test.ts',
  'test/mcp-storm.test.ts',
  'test/dashboard-browser.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // `npm test` runs both projects; `npx vitest run --project unit` skips the process tests.
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'examples/**/*.test.ts'], exclude: [...PROCESS_TESTS, '**/node_modules/**'] },
      },
      { extends: true, test: { name: 'processes', include: PROCESS_TESTS } },
    ],
  },
});
