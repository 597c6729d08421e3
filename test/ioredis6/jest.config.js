// `npm run test:ioredis6`: the client-sensitive suites against ioredis 6 (this folder's package.json).
// Every `ioredis` import (the library's, BullMQ's, the tests') resolves to this folder's copy, and
// forked worker processes get the same through the resolve hook in NODE_OPTIONS.
const { join } = require('node:path');
const { root, variantConfig, e2eFolders, selected } = require('../support/variant-jest.config');

const ioredis = join(__dirname, 'node_modules', 'ioredis');

module.exports = variantConfig(join(__dirname, 'resolve-ioredis6.js'), {
  // What differs under ioredis 6: EVALSHA and script loading, pipelines, reconnection, the URL
  // form and Cluster (test/e2e/redis), the enqueue path's scripts and BullMQ's multi
  // (test/e2e/producer), and the key escaping the client is handed.
  testMatch: selected([
    '<rootDir>/lib/core/context/tenant-key.spec.ts',
    ...e2eFolders('redis', 'producer'),
  ]),
  setupFiles: [join(__dirname, 'assert-ioredis6.js')],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: join(root, 'tsconfig.json') }] },
  moduleNameMapper: {
    '^ioredis$': ioredis,
    '^ioredis/(.*)$': `${ioredis}/$1`,
  },
});
