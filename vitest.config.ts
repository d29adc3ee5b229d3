import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'sdk/test/**/*.test.ts'],
    // One DynamoDB Local per run (or AWS_ENDPOINT_URL_DYNAMODB); each file makes its own table.
    globalSetup: ['test/global-setup.ts'],
    // Per file: the no-Scan guard and cleanup of tables a file forgot to drop.
    setupFiles: ['test/setup-file.ts'],
    // Separate processes: a file's request accounting (`totals`) is its own, and a crashing file
    // cannot take the others down.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
  },
});
