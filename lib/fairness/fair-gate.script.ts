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
  tqFairRelease(...args: Arg[]): Promise<[Arg[], string[], number, string[]?]>;
  tqFairTick(...args: Arg[]): Promise<[Arg[], string[], number, string[]?]>;
  tqFairAdmin(...args: Arg[]): Promise<any[]>;
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

/** Each command is its file and what it includes (`composeLua`), nothing shared by order. */
export const FAIR_SCRIPT_SPECS = Object.fromEntries(
  Object.entries(FILES).map(([name, file]) => [name, { numberOfKeys: 1, file }]),
) as Record<keyof FairCommands, LuaScriptSpec>;

const SCRIPTS = new LuaScripts<FairCommands>(FAIR_LUA_DIR, FAIR_SCRIPT_SPECS);

/** The gate's commands on `client` (defined once per client). */
export function fairCommands(client: RedisClient): FairCommands {
  return SCRIPTS.on(client);
}
