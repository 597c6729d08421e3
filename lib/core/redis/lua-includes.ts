import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { TENANT_KEY_PART_LUA } from '../context/tenant-key';

/**
 * An include line, BullMQ's form (its commands/*.lua): `--- @include "<path>"`, the file
 * `<path>.lua` relative to the including file, or one of `LUA_PARTS` by name.
 */
const INCLUDE = /^---\s*@include\s+"([^"]+)"\s*$/;

/** Lua parts kept in TypeScript (one source for both sides), included by name. */
export const LUA_PARTS: Readonly<Record<string, string>> = {
  '@core/tenant-key': TENANT_KEY_PART_LUA,
};

/**
 * The script of one command: `file` with everything it includes, each part once and every part
 * after the parts it includes (Lua `local`s exist only below their definition), the include
 * lines left out. A part that includes itself through others, or a file that is not there,
 * throws here, naming the files.
 */
export function composeLua(dir: string, file: string): string {
  const parts: string[] = [];
  const done = new Set<string>();
  const open: string[] = [];
  const shown = (path: string) => (path in LUA_PARTS ? path : relative(dir, path));

  const visit = (path: string, from?: string): void => {
    if (done.has(path)) return;
    if (open.includes(path)) {
      const chain = [...open.slice(open.indexOf(path)), path].map(shown).join(' -> ');
      throw new Error(`Lua include cycle: ${chain}`);
    }
    let text = LUA_PARTS[path];
    if (text === undefined) {
      if (!existsSync(path)) {
        const where = from ? ` (included by ${shown(from)})` : '';
        throw new Error(`Lua file missing: ${shown(path)}${where}`);
      }
      text = readFileSync(path, 'utf8');
    }
    open.push(path);
    const lines = text.split('\n');
    const body: string[] = [];
    for (const line of lines) {
      const include = INCLUDE.exec(line);
      if (!include) body.push(line);
      else if (include[1] in LUA_PARTS) visit(include[1], path);
      else visit(resolve(dirname(path), `${include[1]}.lua`), path);
    }
    open.pop();
    done.add(path);
    parts.push(body.join('\n'));
  };

  visit(resolve(join(dir, file)));
  return parts.join('\n');
}
