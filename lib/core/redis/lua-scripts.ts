import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RedisClient } from './tenant-queue.redis';

/** One Lua command: its `.lua` file (KEYS/ARGV in its header) and how many KEYS it takes. */
export interface LuaScriptSpec {
  file: string;
  /** Omit for a variadic command whose first argument is the number of keys. */
  numberOfKeys?: number;
}

/** Reads a `.lua` file next to the code that loads it. */
export function readLua(dir: string, file: string): string {
  return readFileSync(join(dir, file), 'utf8');
}

/**
 * The one loader of the module's Lua scripts: reads each file once, and defines the commands
 * on a client (ioredis `defineCommand`, so each runs by EVALSHA) the first time it is used.
 */
export class LuaScripts<T extends object> {
  private readonly commands: [string, { numberOfKeys?: number; lua: string }][];
  private readonly defined = new WeakSet<object>();

  /** `prelude`: Lua prepended to every script of the set (shared helpers). */
  constructor(dir: string, specs: Record<keyof T & string, LuaScriptSpec>, prelude = '') {
    this.commands = Object.entries<LuaScriptSpec>(specs).map(([name, spec]) => {
      const lua = prelude ? `${prelude}\n${readLua(dir, spec.file)}` : readLua(dir, spec.file);
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
