/**
 * The gate's own Redis cost, without Nest: 20,000 jobs over 1,000 tenants (or TENANTS), each
 * added by BullMQ as the producer does (held in BullMQ's delayed set) and recorded by the gate's
 * enqueue script, then release + dispatch calls of 200 jobs each (what a busy worker drives; each
 * call moves what it admits into BullMQ's wait list), measured by INFO commandstats deltas of a
 * private redis-server. BullMQ's own add is measured apart from the gate's script.
 *   npx ts-node --transpile-only bench/fairness/gate-redis.micro.ts
 * (BUDGET=1 puts the queue in a budget, DCAP=<n> gives every tenant a cap, FK=<n> fair keys,
 * BATCH=<n> releases n jobs per call instead of 200: a worker at concurrency 50 sends about 40.)
 * Writes bench/results/gate-redis.json.
 */
import Redis from 'ioredis';
import { Queue } from 'bullmq';
import { startRedis } from '../../test/support/redis-server';
import { fairCommands, gateKeys } from '../../lib/fairness/fair-gate.script';
import { HOLD_UNTIL_MS } from '../../lib/fairness/fair-gate.interface';
import { load1, redisWork, writeResult } from '../bench-utils';

const TENANTS = Number(process.env.TENANTS ?? 1000);
const JOBS = Number(process.env.JOBS ?? 20_000);
const BATCH = Number(process.env.BATCH ?? 200);
const ENQUEUE_CALL = 1000;

const stats = redisWork;

async function main() {
  const server = await startRedis();
  const client = new Redis({ host: '127.0.0.1', port: server.port, maxRetriesPerRequest: null });
  const queue = new Queue('q', { connection: client, prefix: '{bench:q}' });
  const loadAtStart = load1();
  try {
    const gate = fairCommands(client as never) as unknown as Record<
      string,
      (...args: (string | number | readonly string[])[]) => Promise<any>
    >;
    const base = '{bench:q}:~fair';
    const config = JSON.stringify({
      jp: '{bench:q}:q:',
      chk: 1000,
      sys: '~system',
      dw: 1,
      dcap: Number(process.env.DCAP ?? 0),
      k: 5,
      win: 4 * 50,
      minWin: 16,
      lease: 30000,
      slowShare: 0.1,
      // BUDGET=1: the queue is in a budget (fair-budget.lua); DCAP: a default cap per tenant.
      ...(process.env.BUDGET ? { bg: '{bench:q}:~budget', bn: 'q' } : {}),
      // FK=<n>: fair keys on, each tenant's jobs spread over n keys.
      ...(process.env.FK ? { fk: 'job' } : {}),
    });
    const slow = JSON.stringify({ threshold: 20, window: 60000, recoverAt: 10 });
    let bullAdd = { calls: 0, cpuMicros: 0, scriptMicros: 0, scriptCalls: 0 };
    let gateAdd = { calls: 0, cpuMicros: 0, scriptMicros: 0, scriptCalls: 0 };
    const sum = (into: typeof bullAdd, a: typeof bullAdd, b: typeof bullAdd) => ({
      calls: into.calls + b.calls - a.calls,
      cpuMicros: into.cpuMicros + b.cpuMicros - a.cpuMicros,
      scriptMicros: into.scriptMicros + b.scriptMicros - a.scriptMicros,
      scriptCalls: into.scriptCalls + b.scriptCalls - a.scriptCalls,
    });
    for (let start = 0; start < JOBS; start += ENQUEUE_CALL) {
      const timestamp = Date.now();
      const jobs = [];
      const args: string[] = [];
      for (let i = start; i < start + ENQUEUE_CALL; i++) {
        const lane = process.env.FK ? `\nk${Math.floor(i / TENANTS) % Number(process.env.FK)}` : '';
        const tenant = `t${i % TENANTS}`;
        jobs.push({
          name: 'w',
          data: { t0: timestamp, tenant, _tenant: { tenantId: tenant } },
          opts: { jobId: `j${i}`, timestamp, delay: HOLD_UNTIL_MS - timestamp },
        });
        args.push(`j${i}`, tenant, lane);
      }
      const a0 = await stats(client);
      await queue.addBulk(jobs);
      const a1 = await stats(client);
      await gate.tqFairEnqueue(gateKeys(base), config, 0, 0, '[]', timestamp, '', ...args);
      const a2 = await stats(client);
      bullAdd = sum(bullAdd, a0, a1);
      gateAdd = sum(gateAdd, a1, a2);
    }
    // Fill the window, then each call releases the previous batch and admits the next.
    let window: string[] = (await gate.tqFairRelease(gateKeys(base), config, BATCH, slow))[1];
    let released = 0;
    const callMs: number[] = [];
    const r0 = await stats(client);
    while (window.length) {
      const pairs = window.flatMap((id) => [id, 'c']);
      const t = performance.now();
      const next: string[] = (
        await gate.tqFairRelease(gateKeys(base), config, BATCH, slow, ...pairs)
      )[1];
      callMs.push(performance.now() - t);
      released += window.length;
      window = next;
    }
    const r1 = await stats(client);
    const waiting = await client.llen('{bench:q}:q:wait');

    if (process.env.BREAKDOWN)
      console.log(
        (await client.info('commandstats'))
          .split('\n')
          .filter((l) => l.startsWith('cmdstat'))
          .join('\n'),
      );
    const per = (a: number, b: number, n: number) => Number(((b - a) / n).toFixed(2));
    const sorted = [...callMs].sort((a, b) => a - b);
    const result = {
      command: 'npx ts-node --transpile-only bench/fairness/gate-redis.micro.ts',
      scripts: 'written once (BullMQ holds the job; the gate keeps ids and turns)',
      tenants: TENANTS,
      jobs: JOBS,
      bullmqAdd: {
        commandsPerJob: per(0, bullAdd.calls, JOBS),
        redisCpuMicrosPerJob: per(0, bullAdd.cpuMicros, JOBS),
      },
      gateEnqueue: {
        commandsPerJob: per(0, gateAdd.calls, JOBS),
        redisCpuMicrosPerJob: per(0, gateAdd.cpuMicros, JOBS),
        scriptMicrosPerJob: per(0, gateAdd.scriptMicros, JOBS),
      },
      releaseAndDispatch: {
        jobs: released,
        movedIntoBullmqWait: waiting,
        callsOfBatch: BATCH,
        commandsPerJob: per(r0.calls, r1.calls, released),
        redisCpuMicrosPerJob: per(r0.cpuMicros, r1.cpuMicros, released),
        redisCpuMsPerCall: per(
          r0.cpuMicros / 1000,
          r1.cpuMicros / 1000,
          r1.scriptCalls - r0.scriptCalls,
        ),
        scriptMicrosPerJob: per(r0.scriptMicros, r1.scriptMicros, released),
        scriptMicrosPerCall: per(r0.scriptMicros, r1.scriptMicros, r1.scriptCalls - r0.scriptCalls),
        wallMsPerCallP50: Number(sorted[Math.floor(sorted.length / 2)].toFixed(2)),
      },
      loadAtStart,
      loadAtEnd: load1(),
    };
    console.log(JSON.stringify(result));
    if (!process.env.NO_WRITE) writeResult('gate-redis', result);
  } finally {
    client.disconnect();
    await server.stop();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
