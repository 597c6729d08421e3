import { join } from 'node:path';
import type { RedisClient } from '../core/redis/tenant-queue.redis';
import { LuaScriptSpec, LuaScripts } from '../core/redis/lua-scripts';

type Arg = string | number;
/**
 * A per-job list of arguments, passed as one array: ioredis flattens it into the command (both
 * majors), where spreading it into the call fails past ~100,000 values (V8's argument limit).
 */
type Args = readonly Arg[];

/** The fair gate's Lua commands, registered once per client with `defineCommand`. */
export interface FairCommands {
  tqFairEnqueue(...args: (Arg | Args)[]): Promise<[string, string[] | string, number, string[]?]>;
  tqFairTurnAdd(...args: (Arg | Args)[]): Promise<[string, number]>;
  tqFairTurnStore(...args: (Arg | Args)[]): Promise<[string, number]>;
  tqFairRelease(...args: (Arg | Args)[]): Promise<[Arg[], string[], number, string[]?]>;
  tqFairTick(...args: (Arg | Args)[]): Promise<[Arg[], string[], number, string[]?]>;
  tqFairAdmin(...args: (Arg | Args)[]): Promise<any[]>;
}

/** Where the gate's command files are (each names the parts it includes, modes/ among them). */
export const FAIR_LUA_DIR = join(__dirname, 'lua');

const FILES: Record<keyof FairCommands, string> = {
  tqFairEnqueue: 'fair-enqueue.lua',
  tqFairTurnAdd: 'fair-turn-add.lua',
  tqFairTurnStore: 'fair-turn-store.lua',
  tqFairRelease: 'fair-release.lua',
  tqFairTick: 'fair-tick.lua',
  tqFairAdmin: 'fair-admin.lua',
};

/**
 * Each command is its file and what it includes (`composeLua`), nothing shared by order. Each
 * takes the two keys of `gateKeys`.
 */
export const FAIR_SCRIPT_SPECS = Object.fromEntries(
  Object.entries(FILES).map(([name, file]) => [name, { numberOfKeys: 2, file }]),
) as Record<keyof FairCommands, LuaScriptSpec>;

/**
 * The KEYS of a gate command: the gate base key (KEYS[1]; every key a script touches derives from
 * it) and a second name in its slot. Neither is ever written, and that is their use on Redis
 * Cluster while the queue's slot migrates: Redis routes a script by the keys it declares, and a
 * command of one missing key is sent (ASK) to the importing node, which would run the gate there
 * on an empty keyspace while its keys are still on the old node (a second copy of its state, and
 * MIGRATE of those keys then fails with BUSYKEY). With two missing keys the importing node answers
 * TRYAGAIN instead, so the gate waits (logged as an outage) until the slot has moved.
 */
export function gateKeys(base: string): readonly string[] {
  return [base, `${base}:~migrating`];
}

const SCRIPTS = new LuaScripts<FairCommands>(FAIR_LUA_DIR, FAIR_SCRIPT_SPECS);

/** The gate's commands on `client` (defined once per client). */
export function fairCommands(client: RedisClient): FairCommands {
  return SCRIPTS.on(client);
}
