#!/usr/bin/env node
// `npm test`: the checks and every jest run, three at a time on the two cores. One jest run keeps
// about 0.6 of a core busy (the rest of its time it waits on Redis, Postgres and the worker
// processes it forks), so the full run is cut in two halves of about equal length (by folder:
// see FULL below), each taking a slot from the start, and the other runs, one chain of steps at a
// time, take the third slot and then whichever frees up; the variants' installs run beside them
// from the start (docs/CONTRIBUTING.md, "Test suites", has the measured times).
//
// Usage: node scripts/test.js            every step (what `npm test` and `.ci/run` run)
//        node scripts/test.js <variant>  one variant run: cluster, nest12, ioredis6 or bullmq5
//
// The first half of the full jest run prints as it goes; every other step prints whole, when it
// ends. A failed step stops the rest (each step's process group gets SIGTERM, so the private
// Redis and the worker processes of a jest run go with it) and the run exits 1. The last lines
// give each step's wall time.
'use strict';
const { spawn } = require('node:child_process');
const { join } = require('node:path');

const root = join(__dirname, '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const jest = (...args) => [bin('jest'), '--maxWorkers=1', ...args];
const install = (folder) => ['npm', 'ci', '--prefix', folder, '--no-audit', '--no-fund'];
const typecheck = (project) => [bin('tsc'), '--noEmit', '-p', project];
const declarations = (folder) => ['node', join(root, 'scripts', 'check-declarations.js'), folder];

/**
 * Each variant: its install, type-check (when its declarations differ) and jest run. In the order
 * the slots take them, longest first (cluster 384 s, bullmq5 214, nest12 211, ioredis6 155 on the
 * CI host, 2026-12-06), so the shortest chain ends the run: about a minute less than the other way
 * round.
 */
const VARIANTS = {
  cluster: [['cluster', jest('-c', 'test/cluster/jest.config.js')]],
  bullmq5: [
    ['bullmq5: install', install('test/bullmq5')],
    ['bullmq5: type-check', typecheck('test/bullmq5/tsconfig.json')],
    ['bullmq5: declarations', declarations('test/bullmq5')],
    ['bullmq5', jest('-c', 'test/bullmq5/jest.config.js')],
  ],
  nest12: [
    ['nest12: install', install('test/nest12')],
    ['nest12', jest('-c', 'test/nest12/jest.config.js')],
  ],
  ioredis6: [
    ['ioredis6: install', install('test/ioredis6')],
    ['ioredis6: type-check', typecheck('test/ioredis6/tsconfig.json')],
    ['ioredis6: declarations', declarations('test/ioredis6')],
    ['ioredis6', jest('-c', 'test/ioredis6/jest.config.js')],
  ],
};

/**
 * The full run, in two halves that run side by side: the folders of the longest e2e suites
 * (forked processes, the replayed tour, Redis down at boot, the samples, the fuzz runs), and
 * everything else, unit specs included (about 390 s of suites each on the CI host, 2026-12-05).
 * One pattern picks the first half and leaves out of the second, so every spec runs once.
 */
const FIRST_HALF = 'test/e2e/(processes|docs|redis|samples|fuzz)/';
const FULL = [['jest (unit + e2e), first half', jest(FIRST_HALF)]];
const FULL_REST = [
  ['jest (unit + e2e), second half', jest('--testPathIgnorePatterns', FIRST_HALF)],
];
const CHECKS = [
  ['type-check', typecheck('tsconfig.json')],
  ['lint', ['npm', 'run', 'lint']],
  ['docs:check', ['npm', 'run', 'docs:check']],
];

/** Chains of steps, in the order the two slots take them; a chain's steps run one by one. */
function chains(only) {
  if (only) return [VARIANTS[only]];
  return [FULL, FULL_REST, CHECKS, ...Object.values(VARIANTS)];
}

const running = new Set();
/** Steps this script stopped because another failed (or it was interrupted). */
const stopped = new Set();
const times = [];
let failed = false;

/** Runs one step; `live` prints its output as it comes, else whole at its end. */
function run(name, [command, ...args], live) {
  const started = Date.now();
  const child = spawn(command, args, {
    cwd: root,
    detached: true,
    stdio: ['ignore', live ? 'inherit' : 'pipe', live ? 'inherit' : 'pipe'],
  });
  running.add(child);
  const output = [];
  child.stdout?.on('data', (chunk) => output.push(chunk));
  child.stderr?.on('data', (chunk) => output.push(chunk));
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      running.delete(child);
      const seconds = Math.round((Date.now() - started) / 1000);
      const ok = code === 0;
      const status = ok ? 'ok' : stopped.has(child) ? `stopped (${signal ?? code})` : 'FAILED';
      times.push({ name, seconds, status });
      if (!live) {
        process.stdout.write(`\n──── ${name} (${seconds} s, ${status})\n`);
        process.stdout.write(Buffer.concat(output));
      }
      resolve(ok);
    });
  });
}

function stopAll() {
  for (const child of running) {
    stopped.add(child);
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
}

/** Runs one step of a chain; a failure stops the rest. */
async function step([name, command], live) {
  const ok = !failed && (await run(name, command, live));
  if (!ok && !failed) {
    failed = true;
    stopAll();
  }
  return ok;
}

const isInstall = ([name]) => name.endsWith(': install');

/**
 * Runs the chains `slots` at a time; a chain starts when a slot frees up. With several slots the
 * variants' installs (network and disk, little CPU) run first, one by one, beside the slots, and
 * a chain waits for its own install where it would have run it.
 */
async function runChains(queue, slots) {
  const installs = new Map();
  if (slots > 1) {
    let previous = Promise.resolve(true);
    for (const install of queue.flat().filter(isInstall)) {
      previous = previous.then((ok) => ok && step(install, false));
      installs.set(install, previous);
    }
  }
  const next = async () => {
    for (let chain = queue.shift(); chain && !failed; chain = queue.shift()) {
      for (const each of chain) {
        const ok = await (installs.get(each) ?? step(each, chain === FULL || slots === 1));
        if (!ok) return;
      }
    }
  };
  await Promise.all(Array.from({ length: slots }, next));
}

async function main() {
  const only = process.argv[2];
  if (only && !VARIANTS[only]) {
    console.error(`unknown variant "${only}": one of ${Object.keys(VARIANTS).join(', ')}`);
    process.exit(2);
  }
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      failed = true;
      stopAll();
    });
  }
  // The steps run in process groups of their own: whatever ends this script ends them too.
  process.on('exit', stopAll);
  const started = Date.now();
  await runChains(chains(only), only ? 1 : 3);
  process.stdout.write('\nsteps (wall seconds):\n');
  const row = (name, seconds, status = '') =>
    process.stdout.write(`  ${name.padEnd(32)} ${String(seconds).padStart(5)}  ${status}\n`);
  for (const { name, seconds, status } of times) row(name, seconds, status);
  row('total', Math.round((Date.now() - started) / 1000));
  process.exit(failed ? 1 : 0);
}

void main();
