// `npm run test:cluster`: the suites whose keys a Redis Cluster could split, on a private 3-master
// cluster (test/support/global-setup.ts starts it when TQ_TEST_CLUSTER=1): the fair gate, schedules
// and pools whole, plus the specs of other folders that drive those scripts or the producer's.
const { join } = require('node:path');
const { root, variantConfig, e2eFolders } = require('../support/variant-jest.config');

process.env.TQ_TEST_CLUSTER = '1';

const e2e = (folder, ...names) =>
  names.map((name) => `<rootDir>/test/e2e/${folder}/${name}.e2e-spec.ts`);

module.exports = variantConfig(null, {
  testMatch: [
    ...e2eFolders('fairness', 'scheduler', 'pools'),
    ...e2e('nest', 'context', 'http'),
    ...e2e('producer', 'bad-input', 'system-queue'),
    ...e2e('redis', 'queue-settings'),
    ...e2e(
      'visibility',
      'inspector-consumers',
      'inspector-explain',
      'inspector-history',
      'inspector-stuck-tenants',
      'visibility-flush',
    ),
    // Of the multi-process suites, only fairness-processes (a cap across three workers, one of
    // them SIGKILLed): the others (time share, budgets, layout moves, kills under each mode,
    // schedules across instances, pools, scale-out, shutdown) send the scripts that the folders
    // above drive on the cluster in one process, and took 170 s of this run on a slow host.
    ...e2e('processes', 'fairness-processes'),
    ...e2e('samples', 'fairness-*', 'scheduler-*', 'pools-*'),
  ],
  // 10,000 tenants put no key in another slot than 10 do (every key of the gate shares its
  // queue's hash tag), and the fairness suites send the same scripts: the full run keeps it.
  testPathIgnorePatterns: ['/node_modules/', '/test/e2e/fairness/fairness-scale\\.e2e-spec\\.ts$'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: join(root, 'tsconfig.json') }] },
});
