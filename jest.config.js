/** @type {import('jest').Config} */
const transform = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
};

// test/nest12 has its own install and config (`npm run test:nest12`).
const modulePathIgnorePatterns = ['<rootDir>/test/nest12/'];

module.exports = {
  testTimeout: 60000,
  // The scripts run one test file at a time (--maxWorkers=1, real Redis and worker processes
  // share two cores) in a worker that is replaced once it holds this much after a file: in one
  // long-lived process each file's module graph piles up (1.3 GB by the end), and the late,
  // heavy suites slowed 4x in garbage collection.
  workerIdleMemoryLimit: '512MB',
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: ['<rootDir>/lib/**/*.spec.ts'],
      modulePathIgnorePatterns,
      transform,
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      modulePathIgnorePatterns,
      transform,
    },
  ],
};
