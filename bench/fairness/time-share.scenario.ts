/**
 * Fair share of worker time against the jobs-share gate, same private Redis, same run:
 *   npx ts-node --transpile-only bench/fairness/time-share.scenario.ts [rounds]
 * prints JSON. `throughputRatio`: time-share jobs/s over jobs-share jobs/s (no-op jobs, 2,000 per
 * round over 100 tenants, enqueued while consuming, concurrency 50), the median of alternating
 * pairs. `shares`: in each mode, the slow tenants' part of the handlers' run time while all 100
 * tenants are backlogged (odd tenants' jobs wait 3 ms, even tenants' 1 ms, on timers so a job's
 * time in its slot is its own): ~0.75 with 'jobs' (equal job counts), ~0.5 is what 'time' aims at.
 */
import { startRedis } from '../../test/support/redis-server';
import { load1, median, runScript } from '../bench-utils';
import { setTimeout as sleep } from 'node:timers/promises';
import { BenchJob, Side, moduleSide, throughput, until, work } from './fairness-harness';

type Share = 'jobs' | 'time';

const TENANTS = 100;
const JOBS = 2000;

/**
 * All tenants backlogged (20 jobs each, enqueued before the worker starts), odd tenants' jobs
 * three times as long as even tenants': the odd tenants' part of the run time over the first
 * half of the completions.
 */
async function slowShare(side: Side): Promise<number> {
  const time = { slow: 0, fast: 0 };
  let done = 0;
  work.handle = async (data: BenchJob) => {
    const slow = Number(data.tenant.slice(1)) % 2 === 1;
    const start = performance.now();
    await sleep(slow ? 3 : 1);
    if (++done <= JOBS / 2) time[slow ? 'slow' : 'fast'] += performance.now() - start;
  };
  for (let t = 0; t < TENANTS; t++) await side.enqueue(`t${t}`, JOBS / TENANTS);
  side.run();
  await until(() => done === JOBS, 120_000);
  await side.close();
  return time.slow / (time.slow + time.fast);
}

/** Alternating rounds of the jobs-share and the time-share gate; see the file's header. */
export async function timeShareScenario(rounds = 5) {
  const redis = await startRedis();
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
  const side = (share: Share) => moduleSide(connection, 50, { share });
  try {
    const perSecond: Record<Share, number[]> = { jobs: [], time: [] };
    const ratios: number[] = [];
    const loadAtStart = load1();
    // One warm-up round each, not counted (first boot, JIT).
    for (const share of ['jobs', 'time'] as const)
      await throughput(await side(share), TENANTS, JOBS);
    for (let round = 0; round < rounds; round++) {
      const order: Share[] = round % 2 ? ['time', 'jobs'] : ['jobs', 'time'];
      const got: Partial<Record<Share, number>> = {};
      for (const share of order) {
        got[share] = (await throughput(await side(share), TENANTS, JOBS)).jobsPerSecond;
        perSecond[share].push(got[share]);
      }
      ratios.push(Number((got.time! / got.jobs!).toFixed(3)));
    }
    const shares = {
      jobs: Number((await slowShare(await side('jobs'))).toFixed(3)),
      time: Number((await slowShare(await side('time'))).toFixed(3)),
    };
    return {
      throughputRatio: median(ratios),
      shares,
      ratios,
      jobsPerSecond: perSecond,
      tenants: TENANTS,
      jobsPerRound: JOBS,
      loadAtStart,
      loadAtEnd: load1(),
    };
  } finally {
    await redis.stop();
  }
}

if (require.main === module) runScript(() => timeShareScenario(Number(process.argv[2] ?? 5)));
