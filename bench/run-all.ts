/**
 * `npm run bench`: every bench of the suite, one after another, each on its own private Redis:
 * context, fairness, scheduler, the noisy-neighbour chart, the scale-out run, the tiers
 * (rate limit and lanes) cost and the scale run (1,000,000 jobs over up to 100,000 tenants,
 * about 20 minutes; `npm run bench:scale -- --jobs 100000` for a shorter one). Each writes
 * bench/results/<name>.json (and its block of docs/benchmarks.md); the chart is bench/results/noisy-neighbour.svg.
 * `npm run bench -- context noisy` runs only those. The soak (`npm run bench:soak`) is separate.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ALL = ['context', 'fairness', 'scheduler', 'noisy', 'scaleout', 'tiers', 'scale'];

function main(): number {
  const scripts = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')).scripts;
  const wanted = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ALL;
  const summary: { bench: string; seconds: number; status: string }[] = [];
  for (const bench of wanted) {
    const script = `bench:${bench}`;
    if (!scripts[script]) {
      summary.push({ bench, seconds: 0, status: `no "${script}" script` });
      continue;
    }
    console.log(`\n=== npm run ${script}`);
    const start = Date.now();
    const run = spawnSync('npm', ['run', script], { stdio: 'inherit' });
    summary.push({
      bench,
      seconds: Math.round((Date.now() - start) / 1000),
      status: run.status === 0 ? 'ok' : `failed (${run.status ?? run.signal})`,
    });
  }
  console.table(summary);
  return summary.every((row) => row.status === 'ok') ? 0 : 1;
}

process.exit(main());
