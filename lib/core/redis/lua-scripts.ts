import type { RedisClient } from './tenant-queue.redis';
import { composeLua, shakeLua } from './lua-includes';

/**
 * One Lua command: its `.lua` file (the parts it includes, see `composeLua`, then KEYS/ARGV in
 * its header) and how many KEYS it takes.
 */
export interface LuaScriptSpec {
  file: string;
  /** Omit for a variadic command whose first argument is the number of keys. */
  numberOfKeys?: number;
}

/**
 * The one loader of the module's Lua scripts: composes each command once from its file and the
 * parts it includes (`composeLua`), and defines the commands on a client (ioredis
 * `defineCommand`, so each runs by EVALSHA) the first time it is used.
 */
export class LuaScripts<T extends object> {
  private readonly commands: [string, { numberOfKeys?: number; lua: string }][];
  private readonly defined = new WeakSet<object>();

  constructor(dir: string, specs: Record<keyof T & string, LuaScriptSpec>) {
    this.commands = Object.entries<LuaScriptSpec>(specs).map(([name, spec]) => {
      const lua = shakeLua(composeLua(dir, spec.file));
      return [
        name,
        spec.numberOfKeys === undefined ? { lua } : { numberOfKeys: spec.numberOfKeys, lua },
      ];
    });
  }

  /** `client`, with this set's commands defined on it. */
  on(client: RedisClient): RedisClient & T {
    if (!this.defined.has(client)) {
      for (const [name, definition] of this.commands) client.defineCommand(name, definition);
      this.defined.add(client);
    }
    return client as RedisClient & T;
  }
}
