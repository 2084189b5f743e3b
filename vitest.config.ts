import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      {
        extends: true,
        test: { name: 'integration', include: ['test/integration/**/*.test.ts', 'test/contract/**/*.test.ts', 'test/regressions/**/*.test.ts'] },
      },
      { extends: true, test: { name: 'clients', include: ['test/clients/**/*.test.ts'], fileParallelism: false, testTimeout: 300_000 } },
    ],
  },
});
