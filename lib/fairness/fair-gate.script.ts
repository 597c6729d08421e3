import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TENANT_KEY_PART_LUA } from '../core/context/tenant-key';
import type { RedisClient } from '../core/redis/tenant-queue.redis';

type Arg = string | number;

/** The fair gate's Lua commands, registered once per client with `defineCommand`. */
export interface FairCommands {
  tqFairEnqueue(...args: Arg[]): Promise<[string, string[] | string, number]>;
  tqFairRelease(...args: Arg[]): Promise<[Arg[], string[], number]>;
  tqFairRefuse(...args: Arg[]): Promise<[Arg[], string[], number]>;
  tqFairTick(...args: Arg[]): Promise<[Arg[], string[], number]>;
  tqFairAdmin(...args: Arg[]): Promise<any[]>;
}

const read = (file: string) => readFileSync(join(__dirname, 'lua', file), 'utf8');

const SCRIPTS: Record<keyof FairCommands, string> = {
  tqFairEnqueue: 'fair-enqueue.lua',
  tqFairRelease: 'fair-release.lua',
  tqFairRefuse: 'fair-refuse.lua',
  tqFairTick: 'fair-tick.lua',
  tqFairAdmin: 'fair-admin.lua',
};

const defined = new WeakSet<object>();

/** A gate script as it is loaded: the tenant-key escape and fair-common.lua, then `file`. */
export function fairScript(file: string): string {
  return `${TENANT_KEY_PART_LUA}\n${read('fair-common.lua')}\n${read(file)}`;
}

export function fairCommands(client: RedisClient): FairCommands {
  if (!defined.has(client)) {
    for (const [name, file] of Object.entries(SCRIPTS)) {
      client.defineCommand(name, { numberOfKeys: 1, lua: fairScript(file) });
    }
    defined.add(client);
  }
  return client as unknown as FairCommands;
}
