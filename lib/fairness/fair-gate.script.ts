import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TENANT_KEY_PART_LUA } from '../context/tenant-key';
import type { RedisClient } from '../tenant-queue.redis';

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

/**
 * The prelude every gate script shares, in this order (each file uses what the ones before it
 * define): keys and helpers, the tenants' state, dispatch, what follows an admission.
 */
const PRELUDE = ['fair-keys.lua', 'fair-tenants.lua', 'fair-dispatch.lua', 'fair-settle.lua'];

const defined = new WeakSet<object>();

export function fairCommands(client: RedisClient): FairCommands {
  if (!defined.has(client)) {
    const prelude = [TENANT_KEY_PART_LUA, ...PRELUDE.map(read)].join('\n');
    for (const [name, file] of Object.entries(SCRIPTS)) {
      client.defineCommand(name, { numberOfKeys: 1, lua: `${prelude}\n${read(file)}` });
    }
    defined.add(client);
  }
  return client as unknown as FairCommands;
}
