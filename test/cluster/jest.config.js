// `npm run test:cluster`: the suites whose keys a Redis Cluster could split, on a private 3-master
// cluster (test/support/global-setup.ts starts it when TQ_TEST_CLUSTER=1): schedules whole, and of
// the fair gate, pools and the other folders the specs that send every Lua command of lib/ and
// every shape of keys those commands take. Every key a gate command touches derives from its
// queue's gate key (one hash tag), so the gate's suites differ on a cluster in the commands and
// key shapes they send, not in their fairness cases: traced on 2026-12-07 (ioredis's sendCommand,
// per spec, commands with their keys' shapes), the fairness specs left out below sent no command
// or key shape that the kept ones do not, and took 188 s of this run's 366. The run's global
// teardown fails naming any Lua command of lib/ that no spec here sent (test/support/script-trace.js).
const { join } = require('node:path');
const { root, variantConfig, e2eFolders } = require('../support/variant-jest.config');

process.env.TQ_TEST_CLUSTER = '1';

const e2e = (folder, ...names) =>
  names.map((name) => `<rootDir>/test/e2e/${folder}/${name}.e2e-spec.ts`);

module.exports = variantConfig(null, {
  testMatch: [
    // Left to the full run: fairness-bullmq-ops, -floor, -turns, -hints-idle, -keys, -fair-key,
    // -time-share-retries, -runtime-changes (their commands and key shapes are sent by
    // fairness, -mode-pairs, -modes-combined and -bullmq-state), and fairness-scale (10,000
    // tenants put no key in another slot than 10 do).
    ...e2e(
      'fairness',
      'fairness',
      'fairness-bad-entry',
      'fairness-budget-holds',
      'fairness-bullmq-state',
      'fairness-floor-priorities',
      'fairness-hints-after-data-loss',
      'fairness-lanes-order',
      'fairness-layout-batches',
      'fairness-mode-pairs',
      'fairness-modes-combined',
      'fairness-noop-adds',
      'fairness-one-lane',
      'fairness-outage',
      'fairness-recall-bounded',
    ),
    ...e2eFolders('scheduler'),
    // tiers: the same pool and gate commands as pools, with tier settings.
    ...e2e('pools', 'pools', 'pools-cron'),
    // telemetry: a job with telemetry options is the gate's lean turn call (fair-turn-add.lua).
    ...e2e('nest', 'context', 'http', 'telemetry'),
    // producer-job-ids: the id owners' keys, and the gate's job listing (fair-gate-jobs.lua).
    ...e2e('producer', 'bad-input', 'system-queue', 'producer-job-ids'),
    // visibility-reconcile and containment-idempotency: the counters' reconcile and runOnce's
    // claim, lease and completion scripts.
    ...e2e('redis', 'queue-settings', 'visibility-reconcile'),
    ...e2e('containment', 'containment-idempotency'),
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
    // schedules across instances, pools, scale-out, shutdown) send the scripts that the specs
    // above drive on the cluster in one process, and took 170 s of this run on a slow host.
    ...e2e('processes', 'fairness-processes'),
    ...e2e('samples', 'fairness-*', 'scheduler-*', 'pools-*'),
  ],
  setupFilesAfterEnv: [join(__dirname, '..', 'support', 'script-trace.js')],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: join(root, 'tsconfig.json') }] },
});
