// `npm run test:ioredis6`: the Redis-heavy suites against ioredis 6 (this folder's package.json).
// Every `ioredis` import (the library's, BullMQ's, the tests') resolves to this folder's copy, and
// forked worker processes get the same through the resolve hook in NODE_OPTIONS.
const { join, resolve } = require('node:path');

const root = resolve(__dirname, '../..');
const ioredis = join(__dirname, 'node_modules', 'ioredis');

process.env.NODE_OPTIONS = [
  process.env.NODE_OPTIONS,
  `--require=${JSON.stringify(join(__dirname, 'resolve-ioredis6.js'))}`,
]
  .filter(Boolean)
  .join(' ');

module.exports = {
  rootDir: root,
  testEnvironment: 'node',
  testTimeout: 60000,
  workerIdleMemoryLimit: '512MB',
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testMatch: ['<rootDir>/lib/context/tenant-key.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  modulePathIgnorePatterns: ['<rootDir>/test/nest12/'],
  setupFiles: [join(__dirname, 'assert-ioredis6.js')],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: join(root, 'tsconfig.json') }] },
  moduleNameMapper: {
    '^ioredis$': ioredis,
    '^ioredis/(.*)$': `${ioredis}/$1`,
  },
};
