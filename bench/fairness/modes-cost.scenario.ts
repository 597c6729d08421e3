/**
 * What each fairness mode of issue 18 costs against the gate without it, same private Redis, same
 * run, alternating rounds (the order turns each round):
 *   npx ts-node --transpile-only bench/fairness/modes-cost.scenario.ts [rounds]
 * No-op jobs end to end (enqueued while consuming, concurrency 50), 20,000 per round over 1,000
 * tenants. Ratios, each the median of the within-round ratios: share 'time' / the jobs-share gate;
 * fair keys (10 per tenant) / the same gate without fairKey; a budget of 2 queues' cap (each
 * tenant capped at 20) / the same cap without the budget. The floor's cost is floor.scenario.ts.
 */
import { startRedis } from '../../test/support/redis-server';
import { load1, median, runScript } from '../bench-utils';
import { ModuleSideExtra, moduleSide, throughput } from './fairness-harness';
import type { TenantFairnessOptions } from '../../lib';

const TENANTS = 1000;
const JOBS = 20_000;

interface Variant {
  name: string;
  fairness: TenantFairnessOptions;
  extra?: ModuleSideExtra;
}

const VARIANTS: Variant[] = [
  { name: 'gate', fairness: {} },
  { name: 'time', fairness: { share: 'time' } },
  { name: 'fairKey', fairness: { fairKey: 'job' }, extra: { fairKeys: 10 } },
  { name: 'capped', fairness: { defaultConcurrency: 20 } },
  { name: 'budget', fairness: { defaultConcurrency: 20 }, extra: { budget: 'bench' } },
];

const PAIRS: [string, string][] = [
  ['time', 'gate'],
  ['fairKey', 'gate'],
  ['budget', 'capped'],
];

export async function modesCostScenario(rounds = 3) {
  const redis = await startRedis();
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
  const run = async (v: Variant) =>
    (await throughput(await moduleSide(connection, 50, v.fairness, v.extra), TENANTS, JOBS))
      .jobsPerSecond;
  try {
    const loadAtStart = load1();
    for (const v of VARIANTS) await run(v); // warm-up, not counted
    const perRound: Record<string, number>[] = [];
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 ? [...VARIANTS].reverse() : VARIANTS;
      const got: Record<string, number> = {};
      for (const v of order) got[v.name] = await run(v);
      perRound.push(got);
    }
    const ratios = Object.fromEntries(
      PAIRS.map(([mode, base]) => [
        `${mode}/${base}`,
        Number(median(perRound.map((r) => r[mode] / r[base])).toFixed(3)),
      ]),
    );
    return {
      ratios,
      jobsPerSecond: perRound,
      tenants: TENANTS,
      jobsPerRound: JOBS,
      loadAtStart,
      loadAtEnd: load1(),
    };
  } finally {
    await redis.stop();
  }
}

if (require.main === module) runScript(() => modesCostScenario(Number(process.argv[2] ?? 3)));
