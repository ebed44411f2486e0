import { defineConfig } from 'vitest/config';

/** The real control-plane tier (test/real): built Go binaries, minutes per file; not in `npm test`. */
export default defineConfig({
  test: {
    include: ['test/real/**/*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 1_800_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
  },
});
