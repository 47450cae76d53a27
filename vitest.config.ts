import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The machine has two cores; real nodes and RocksDB instances are started per file.
    fileParallelism: true,
    maxWorkers: 2,
    pool: 'forks',
  },
});
