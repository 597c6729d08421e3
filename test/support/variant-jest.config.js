// The base of the jest configs that re-run the suites against another version of a dependency
// (test/nest12, test/ioredis6): the repository's setup, plus a resolve hook for forked workers.
const { resolve } = require('node:path');

const root = resolve(__dirname, '../..');

/**
 * `hook`: a file `--require`d by every forked worker process (plain Node, not jest), which points
 * its imports at the variant's copy; `config`: the variant's own jest settings.
 */
function variantConfig(hook, config) {
  process.env.NODE_OPTIONS = [process.env.NODE_OPTIONS, `--require=${JSON.stringify(hook)}`]
    .filter(Boolean)
    .join(' ');
  return {
    rootDir: root,
    testEnvironment: 'node',
    testTimeout: 60000,
    workerIdleMemoryLimit: '512MB',
    reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
    globalSetup: '<rootDir>/test/support/global-setup.ts',
    globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    ...config,
  };
}

module.exports = { root, variantConfig };
