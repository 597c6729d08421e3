/**
 * Cost of per-tenant rate limits (and lanes) in the fair gate: the same no-op workload through
 * plain BullMQ, the module with fairness, fairness + a rate limit that every tenant passes
 * (so each admission runs the GCRA check but nobody waits), and fairness + two lanes.
 *   npm run bench:tiers
 * Starts its own redis-server on a free port; writes bench/results/tiers.json and its block of docs/benchmarks.md.
 * Goal (issue 9): the rate limiter costs < 10% throughput against fairness alone.
 */
import { loadavg } from 'node:os';
import { startRedis } from '../../test/support/redis-server';
import { median, table, updateBenchmarksPage, writeResult } from '../bench-utils';
import { moduleSide, plainSide, throughput } from '../fairness/fairness-harness';

const JOBS = Number(process.env.JOBS ?? 20_000);
const TENANTS = Number(process.env.TENANTS ?? 100);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CONCURRENCY = 50;

async function main() {
  const redis = await startRedis();
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
  const loadAverageAtStart = loadavg().map((l) => Number(l.toFixed(2)));
  const rounds = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate the order of the module variants between rounds, so drift hits each alike.
      const variants = [
        ['fairness', {}],
        ['rateLimit', { rateLimit: { max: 1_000_000, per: 1000, burst: 1000 } }],
        ['lanes', { lanes: { interactive: { share: 0.5 }, bulk: { share: 0.5 } } }],
      ] as const;
      const ordered = round % 2 ? [...variants].reverse() : variants;
      const plain = await throughput(await plainSide(connection, CONCURRENCY), TENANTS, JOBS);
      const row = { round, plain: plain.jobsPerSecond, fairness: 0, rateLimit: 0, lanes: 0 };
      const cpu: Record<string, number> = { plain: plain.cpuMicrosPerJob };
      for (const [name, fairness] of ordered) {
        const result = await throughput(
          await moduleSide(connection, CONCURRENCY, fairness),
          TENANTS,
          JOBS,
        );
        row[name] = result.jobsPerSecond;
        cpu[name] = result.cpuMicrosPerJob;
      }
      const entry = {
        ...row,
        rateLimitVsFairness: Number((row.rateLimit / row.fairness).toFixed(3)),
        lanesVsFairness: Number((row.lanes / row.fairness).toFixed(3)),
        fairnessVsPlain: Number((row.fairness / row.plain).toFixed(3)),
        nodeCpuMicrosPerJob: cpu,
      };
      console.log(JSON.stringify(entry));
      rounds.push(entry);
    }
  } finally {
    await redis.stop();
  }
  const rateLimitVsFairness = median(rounds.map((r) => r.rateLimitVsFairness));
  const lanesVsFairness = median(rounds.map((r) => r.lanesVsFairness));
  const file = writeResult('tiers', {
    command: 'npm run bench:tiers',
    workload: `${JOBS} no-op jobs over ${TENANTS} tenants, concurrency ${CONCURRENCY}, ${ROUNDS} rounds`,
    loadAverageAtStart,
    loadAverageAtEnd: loadavg().map((l) => Number(l.toFixed(2))),
    rounds,
    medianRateLimitVsFairness: rateLimitVsFairness,
    medianLanesVsFairness: lanesVsFairness,
    goal: 'rate limiter < 10% throughput loss vs fairness alone (ratio >= 0.90)',
    goalMet: rateLimitVsFairness >= 0.9,
  });
  updateBenchmarksPage(
    'tiers',
    [
      `\`npm run bench:tiers\`: ${JOBS.toLocaleString('en')} no-op jobs over ${TENANTS} tenants, concurrency ${CONCURRENCY}, ${ROUNDS} rounds, one private redis-server (load average at start ${loadAverageAtStart[0]}).`,
      '',
      table(
        [
          'round',
          'plain BullMQ jobs/s',
          'fairness jobs/s',
          '+ rate limit jobs/s',
          '+ lanes jobs/s',
          'rate limit / fairness',
          'lanes / fairness',
        ],
        rounds.map((r) => [
          r.round,
          r.plain,
          r.fairness,
          r.rateLimit,
          r.lanes,
          r.rateLimitVsFairness,
          r.lanesVsFairness,
        ]),
      ),
      '',
      `Median rate limit / fairness: **${rateLimitVsFairness}** (goal >= 0.90); lanes / fairness: ${lanesVsFairness}. Raw figures: bench/results/tiers.json.`,
    ].join('\n'),
  );
  console.log(`wrote ${file}`);
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
