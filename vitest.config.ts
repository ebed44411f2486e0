import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'shared/**/*.test.ts', 'functions/**/*.test.ts', 'infra/**/*.test.ts'],
    // The real control-plane tier and the moto tier have their own configs (vitest.real.config.ts,
    // npm run test:real; vitest.moto.config.ts, npm run test:moto).
    exclude: ['**/node_modules/**', 'test/real/**', 'test/moto/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
