import { defineConfig } from 'vitest/config';

/** The moto conformance tier (test/moto): nodefleet's EC2/SSM adapters against moto's server (Python, .ci/moto/install); not in `npm test`. */
export default defineConfig({
  test: {
    include: ['test/moto/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
  },
});
