// `npm run test:bullmq5`: the suites that touch BullMQ's API or its Redis keys, against bullmq 5
// (this folder's package.json). Every `bullmq` import (the library's, @nestjs/bullmq's,
// bull-board's, the tests') resolves to this folder's copy, ioredis to the repository's one, and
// forked worker processes get the same through the resolve hook in NODE_OPTIONS.
const { join } = require('node:path');
const { root, variantConfig } = require('../support/variant-jest.config');
const { swaps } = require('./swaps');

const moduleNameMapper = {};
for (const [name, [, folder]] of Object.entries(swaps)) {
  const escaped = name.replace(/[/.]/g, '\\$&');
  moduleNameMapper[`^${escaped}$`] = folder;
  moduleNameMapper[`^${escaped}/(.*)$`] = `${folder}/$1`;
}

module.exports = variantConfig(join(__dirname, 'resolve-bullmq5.js'), {
  testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
  modulePathIgnorePatterns: ['<rootDir>/test/nest12/', '<rootDir>/test/ioredis6/'],
  setupFiles: [join(__dirname, 'assert-bullmq5.js')],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: join(root, 'tsconfig.json') }] },
  moduleNameMapper,
});
