import type { JobGatePlace, JobHold, GateJob, GateJobAnswer } from '../metrics';
import type { RedisClient } from '../core/redis/tenant-queue.redis';
import type { FairGate } from './fair-gate';
import { LuaScriptSpec, LuaScripts } from '../core/redis/lua-scripts';
import { FAIR_LUA_DIR } from './fair-gate.script';

interface FairReadCommands {
  tqFairExplain(base: string, config: string, jobId: string): Promise<(string | number)[]>;
  tqFairGateJobs(base: string, config: string, tenant: string, limit: number): Promise<string[]>;
  tqFairGated(base: string, config: string, ...tenants: string[]): Promise<number[]>;
  tqFairHeld(base: string, config: string, limit: number, budget: number): Promise<string[]>;
}

/** The gate's read-only scripts (never on the job path; they include no dispatch). */
export const FAIR_READ_SPECS: Record<keyof FairReadCommands, LuaScriptSpec> = {
  tqFairExplain: { numberOfKeys: 1, file: 'fair-explain.lua' },
  tqFairGateJobs: { numberOfKeys: 1, file: 'fair-gate-jobs.lua' },
  tqFairGated: { numberOfKeys: 1, file: 'fair-gated.lua' },
  tqFairHeld: { numberOfKeys: 1, file: 'fair-held.lua' },
};

/** Backlog entries `heldTenants` looks at, at most (over every lane): a bounded read. */
export const HELD_SCAN_BUDGET = 1000;

const READS = new LuaScripts<FairReadCommands>(FAIR_LUA_DIR, FAIR_READ_SPECS);

function readCommands(client: RedisClient): FairReadCommands {
  return READS.on(client);
}

/** The gate's own config string, so a script sees exactly the lanes and defaults it runs with. */
function configOf(gate: FairGate): string {
  return gate.config.script;
}

/** How many jobs each tenant has waiting in the gate, in `tenants`' order (one script call). */
export async function gatedCounts(
  client: RedisClient,
  gate: FairGate,
  tenants: string[],
): Promise<number[]> {
  if (tenants.length === 0) return [];
  return (await readCommands(client).tqFairGated(gate.base, configOf(gate), ...tenants)).map(
    Number,
  );
}

/**
 * Up to `limit` tenants with jobs held in the gate, the longest held first (fair-held.lua, read
 * only; at most `HELD_SCAN_BUDGET` backlog entries looked at).
 */
export async function heldTenants(
  client: RedisClient,
  gate: FairGate,
  limit: number,
): Promise<string[]> {
  const flat = await readCommands(client).tqFairHeld(
    gate.base,
    configOf(gate),
    limit,
    HELD_SCAN_BUDGET,
  );
  const tenants: string[] = [];
  for (let i = 0; i < flat.length; i += 2) tenants.push(String(flat[i]));
  return tenants;
}

/** Up to `limit` jobs waiting in a tenant's backlog, next first. */
export async function listGateJobs(
  client: RedisClient,
  gate: FairGate,
  tenantId: string,
  limit: number,
): Promise<GateJob[]> {
  const flat = await readCommands(client).tqFairGateJobs(
    gate.base,
    configOf(gate),
    tenantId,
    limit,
  );
  const jobs: GateJob[] = [];
  for (let i = 0; i + 2 < flat.length; i += 3) {
    const job = JSON.parse(flat[i + 2]) as { n: string; d: unknown; o: Record<string, unknown> };
    jobs.push({ lane: flat[i], id: flat[i + 1], name: job.n, data: job.d, opts: job.o ?? {} });
  }
  return jobs;
}

/**
 * Reads one job's place in a fair gate (fair-explain.lua, read only) and names what holds it,
 * most decisive first: a paused tenant or a full cap admits nothing whatever its turn.
 */
export async function explainGateJob(
  client: RedisClient,
  gate: FairGate,
  jobId: string,
): Promise<GateJobAnswer | undefined> {
  const reply = await readCommands(client).tqFairExplain(gate.base, configOf(gate), jobId);
  if (reply[0] === 'none') return undefined;
  const tenantId = String(reply[1]);
  if (reply[0] === 'admitted') return { state: 'admitted', tenantId };
  const [, , lane, pos, size, rank, inTurn, limited, now, weight, cap, inf, paused, slow] = reply;
  const [win, leases, , , laneAt, earlier] = reply.slice(14).map(Number);
  const limitedUntil = Number(limited) >= 0 ? Number(limited) : null;
  const place: JobGatePlace = {
    lane: String(lane),
    backlogPosition: Number(pos),
    backlogLength: Number(size),
    turnPosition: Number(rank) >= 0 ? Number(rank) : null,
    tenantsInTurn: Number(inTurn),
    weight: Number(weight),
    concurrency: Number(cap),
    inFlight: Math.max(0, Number(inf)),
    paused: Number(paused) === 1,
    slowLane: Number(slow) === 1,
    rateLimitedUntil: limitedUntil !== null && limitedUntil > Number(now) ? limitedUntil : null,
    window: win,
    admitted: leases,
  };
  const holds: JobHold[] = [];
  if (place.paused) holds.push('paused');
  if (place.concurrency > 0 && place.inFlight >= place.concurrency) holds.push('concurrency-cap');
  if (place.rateLimitedUntil !== null) holds.push('rate-limit');
  const full = place.admitted >= place.window;
  if (gate.options.lanes.length > 1 && (earlier > 0 || (full && laneAt > 1))) {
    holds.push('lane-share');
  }
  if (full) holds.push('window-full');
  if (place.slowLane) holds.push('slow-lane');
  if (place.turnPosition !== null && place.turnPosition > 0) holds.push('turn');
  if (place.backlogPosition > 0) holds.push('backlog');
  return { state: 'gate', tenantId, place, holds };
}
