import { join } from 'node:path';
import { TENANT_KEY_PART_LUA } from '../core/context/tenant-key';
import type { RedisClient } from '../core/redis/tenant-queue.redis';
import { LuaScriptSpec, LuaScripts, readLua } from '../core/redis/lua-scripts';

type Arg = string | number;

/** The fair gate's Lua commands, registered once per client with `defineCommand`. */
export interface FairCommands {
  tqFairEnqueue(...args: Arg[]): Promise<[string, string[] | string, number, string[]?]>;
  tqFairRelease(...args: Arg[]): Promise<[Arg[], string[], number, string[]?]>;
  tqFairTick(...args: Arg[]): Promise<[Arg[], string[], number, string[]?]>;
  tqFairAdmin(...args: Arg[]): Promise<any[]>;
}

/** Where the gate's `.lua` files are. */
export const FAIR_LUA_DIR = join(__dirname, 'lua');

const FILES: Record<keyof FairCommands, string> = {
  tqFairEnqueue: 'fair-enqueue.lua',
  tqFairRelease: 'fair-release.lua',
  tqFairTick: 'fair-tick.lua',
  tqFairAdmin: 'fair-admin.lua',
};

/**
 * The prelude every gate script shares, in this order (each file uses what the ones before it
 * define): keys and helpers, a budget's shared state, the tenants' state, fair share of time,
 * floors, fair keys inside a tenant, BullMQ's side (the held jobs), dispatch, what follows an
 * admission.
 */
const PRELUDE = [
  'fair-keys.lua',
  'fair-budget.lua',
  'fair-tenants.lua',
  'fair-time.lua',
  'fair-floor.lua',
  'fair-fairkey.lua',
  'fair-bull.lua',
  'fair-dispatch.lua',
  'fair-settle.lua',
];

/** What every gate script starts with: the tenant-key escape, then the shared prelude. */
export function fairPrelude(): string {
  return [TENANT_KEY_PART_LUA, ...PRELUDE.map((file) => readLua(FAIR_LUA_DIR, file))].join('\n');
}

const SCRIPTS = new LuaScripts<FairCommands>(
  FAIR_LUA_DIR,
  Object.fromEntries(
    Object.entries(FILES).map(([name, file]) => [name, { numberOfKeys: 1, file }]),
  ) as Record<keyof FairCommands, LuaScriptSpec>,
  fairPrelude(),
);

/** The gate's commands on `client` (defined once per client). */
export function fairCommands(client: RedisClient): FairCommands {
  return SCRIPTS.on(client);
}
