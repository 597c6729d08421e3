// The base of the jest configs that re-run part of the suite under another setting: another version
// of a dependency (test/nest12, test/ioredis6, with a resolve hook for forked workers) or Redis
// Cluster (test/cluster). Each run selects whole folders of test/e2e/ (docs/CONTRIBUTING.md, "Test
// suites", says which and why); `TQ_TEST_ALL=1` (`npm run test:all`) widens a dependency variant to
// every suite.
const { resolve } = require('node:path');

const root = resolve(__dirname, '../..');

/** The spec files of these folders of test/e2e/. */
function e2eFolders(...folders) {
  return folders.map((folder) => `<rootDir>/test/e2e/${folder}/**/*.e2e-spec.ts`);
}

/** Every unit and e2e spec: what `npm run test:all` gives each dependency variant. */
const everySpec = ['<rootDir>/lib/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'];

/** The selection, or every spec when `TQ_TEST_ALL=1`. */
function selected(testMatch) {
  return process.env.TQ_TEST_ALL === '1' ? everySpec : testMatch;
}

/**
 * `hook`: a file `--require`d by every forked worker process (plain Node, not jest), which points
 * its imports at the variant's copy (none for a run that changes no dependency); `config`: the
 * run's own jest settings.
 */
function variantConfig(hook, config) {
  if (hook) {
    process.env.NODE_OPTIONS = [process.env.NODE_OPTIONS, `--require=${JSON.stringify(hook)}`]
      .filter(Boolean)
      .join(' ');
  }
  return {
    rootDir: root,
    testEnvironment: 'node',
    testTimeout: 60000,
    workerIdleMemoryLimit: '512MB',
    reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
    globalSetup: '<rootDir>/test/support/global-setup.ts',
    globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    modulePathIgnorePatterns: ['<rootDir>/test/nest12/'],
    ...config,
  };
}

module.exports = { root, variantConfig, e2eFolders, selected };
