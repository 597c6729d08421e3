/**
 * The gate's own Redis cost, without BullMQ or Nest: 20,000 jobs over 1,000 tenants (or
 * TENANTS) enqueued through the gate's scripts, then release + dispatch calls of 200 jobs each
 * (what a busy worker drives), measured by INFO commandstats deltas of a private redis-server.
 *   npx ts-node --transpile-only bench/fairness/gate-redis.micro.ts
 * (BUDGET=1 puts the queue in a budget, DCAP=<n> gives every tenant a cap.)
 * Writes bench/results/gate-redis.json.
 */
import Redis from 'ioredis';
import { startRedis } from '../../test/support/redis-server';
import { fairCommands } from '../../lib/fairness/fair-gate.script';
import { load1, redisWork, writeResult } from '../bench-utils';

const TENANTS = Number(process.env.TENANTS ?? 1000);
const JOBS = Number(process.env.JOBS ?? 20_000);
const BATCH = 200;
const ENQUEUE_CALL = 1000;

const stats = redisWork;

async function main() {
  const server = await startRedis();
  const client = new Redis({ host: '127.0.0.1', port: server.port });
  const loadAtStart = load1();
  try {
    const gate = fairCommands(client as never) as unknown as Record<
      string,
      (...args: (string | number)[]) => Promise<any>
    >;
    const base = '{bench:q}:~fair';
    const config = JSON.stringify({
      // BullMQ's job prefix: each release call's acks are checked against its finished sets.
      jp: '{bench:q}:q:',
      resend: 30000,
      dw: 1,
      dcap: Number(process.env.DCAP ?? 0),
      k: 5,
      win: 4 * 50,
      minWin: 16,
      lease: 30000,
      slowShare: 0.1,
      tp: true,
      // BUDGET=1: the queue is in a budget (fair-budget.lua); DCAP: a default cap per tenant.
      ...(process.env.BUDGET ? { bg: '{bench:q}:~budget', bn: 'q' } : {}),
      // FK=<n>: fair keys on, each tenant's jobs spread over n keys.
      ...(process.env.FK ? { fk: 'job' } : {}),
    });
    const slow = JSON.stringify({ threshold: 20, window: 60000, recoverAt: 10 });
    const fused = !gate.tqFairAck;
    const data = JSON.stringify({
      n: 'w',
      d: { t0: Date.now(), tenant: 't0', _tenant: {} },
      o: {},
    });
    const e0 = await stats(client);
    const admitted: string[] = [];
    const take = (reply: unknown[]) => {
      const flat = (fused ? reply[1] : reply[1]) as string[];
      const ids: string[] = [];
      for (let i = 0; i < flat.length; i += 3) ids.push(flat[i]);
      return ids;
    };
    for (let start = 0; start < JOBS; start += ENQUEUE_CALL) {
      const args: string[] = [];
      for (let i = start; i < start + ENQUEUE_CALL; i++) {
        const lane = process.env.FK ? `\nk${Math.floor(i / TENANTS) % Number(process.env.FK)}` : '';
        args.push(`j${i}`, `t${i % TENANTS}`, lane, data);
      }
      const reply = fused
        ? await gate.tqFairEnqueue(base, config, 0, 0, '[]', 0, ...args)
        : await gate.tqFairEnqueue(base, config, 0, 0, '{}', ...args);
      admitted.push(...take(reply));
    }
    const e1 = await stats(client);
    // Fill the window, then each call releases the previous batch and admits the next.
    let window = take(
      fused
        ? await gate.tqFairRelease(base, config, BATCH, slow, 0)
        : await gate.tqFairRelease(base, config, BATCH, slow),
    );
    let released = 0;
    const callMs: number[] = [];
    const r0 = await stats(client);
    while (window.length) {
      const pairs = window.flatMap((id) => [id, 'c']);
      const t = performance.now();
      let next: string[];
      if (fused) {
        next = take(
          await gate.tqFairRelease(base, config, BATCH, slow, next0(window), ...window, ...pairs),
        );
      } else {
        await gate.tqFairAck(base, config, ...window);
        next = take(await gate.tqFairRelease(base, config, BATCH, slow, ...pairs));
      }
      callMs.push(performance.now() - t);
      released += window.length;
      window = next;
    }
    const r1 = await stats(client);

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
      scripts: fused ? 'batched (gate branch)' : 'per-job calls (before)',
      tenants: TENANTS,
      jobs: JOBS,
      enqueue: {
        commandsPerJob: per(e0.calls, e1.calls, JOBS),
        redisCpuMicrosPerJob: per(e0.cpuMicros, e1.cpuMicros, JOBS),
        scriptMicrosPerJob: per(e0.scriptMicros, e1.scriptMicros, JOBS),
      },
      releaseAndDispatch: {
        jobs: released,
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
    if (fused) writeResult('gate-redis', result);
  } finally {
    client.disconnect();
    await server.stop();
  }
}

/** With fused acks, the released ids are also the acknowledged ones (ack count first). */
function next0(window: string[]): number {
  return window.length;
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
