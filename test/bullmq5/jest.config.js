// `npm run test:bullmq5`: the suites that touch BullMQ's API or its Redis keys, against bullmq 5
// (this folder's package.json). Every `bullmq` import (the library's, @nestjs/bullmq's,
// bull-board's, the tests') resolves to this folder's copy, ioredis to the repository's one, and
// forked worker processes get the same through the resolve hook in NODE_OPTIONS.
const { join } = require('node:path');
const { root, variantConfig, selected } = require('../support/variant-jest.config');
const { swaps } = require('./swaps');

const moduleNameMapper = {};
for (const [name, [, folder]] of Object.entries(swaps)) {
  const escaped = name.replace(/[/.]/g, '\\$&');
  moduleNameMapper[`^${escaped}$`] = folder;
  moduleNameMapper[`^${escaped}/(.*)$`] = `${folder}/$1`;
}

module.exports = variantConfig(join(__dirname, 'resolve-bullmq5.js'), {
  // What differs under bullmq 5: the queue's client and backend (lib/core/bullmq), BullMQ's add,
  // addBulk and priorities behind the fair gate's hand-over and its turns at add (prioritized
  // scores), worker events (and the context of a worker's main loop) and stalled recovery in
  // forked workers, job schedulers and @TenantCron, dead letters (our Lua reads BullMQ's job hash
  // and failed set), bull-board's adapter, the @nestjs/bullmq bridge, bullmq-otel 1.x, plain
  // Queue.add's option checks, and the job options a worker reads back. Suites that only drive the module's own Lua through the same calls
  // (the fairness modes, the fuzzers) do not change with the major.
  testMatch: selected([
    '<rootDir>/test/e2e/*/@(' +
      [
        'fairness',
        'fairness-bullmq-state',
        'fairness-bullmq-ops',
        'fairness-turns',
        'fairness-lanes-order',
        'fairness-processes',
        // The slow lane taking a tenant's turns back out of BullMQ's prioritized set, and the
        // worker's 'failed' event handing the gate the processor's error (an outage is no
        // failure of the tenant's).
        'fairness-runtime-changes',
        'fairness-outage',
        // Workers dropped past the shutdown bound (bullmq 5 retried a late job's end forever);
        // its stalled-run cases are left to fairness-bullmq-ops (the release's read of BullMQ's
        // lock key) and lock-lost (BullMQ 5's lock errors).
        'shutdown-running',
        'worker-path',
        // BullMQ's move of a job with a priority back to `prioritized` (no marker) and the
        // worker's own move after a RateLimitError.
        'worker-put-back',
        'context-around-jobs',
        'scheduler',
        'scheduler-cron',
        // An instance without the cron hands its jobs back (moveToDelayed + DelayedError).
        'scheduler-cron-rolling',
        'containment',
        'containment-idempotency',
        'dead-letter-sweep',
        'dead-letters-retry',
        'bull-board',
        'bullmq-compat',
        'bullmq-compat-outage',
        // The worker's errors for a job whose lock expired, recognised by BullMQ's wording.
        'lock-lost',
        // BullMQ's worker retrying a fetch Redis refuses (NOPERM) at once, in a forked app.
        'redis-acl',
        'telemetry',
        'telemetry-envelope',
        'telemetry-cron',
        'telemetry-replay',
        'producer-enqueue',
        'visibility',
        // job.opts under the testing module is what this major's worker reads back.
        'testing-job-opts',
      ].join('|') +
      ').e2e-spec.ts',
  ]),
  modulePathIgnorePatterns: ['<rootDir>/test/nest12/', '<rootDir>/test/ioredis6/'],
  setupFiles: [join(__dirname, 'assert-bullmq5.js')],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: join(root, 'tsconfig.json') }] },
  moduleNameMapper,
});
