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

/** A top-level function definition's first line, and its name. */
const LOCAL_FUNCTION = /^local function ([A-Za-z_]\w*)\s*\(/;
/** Lua's block openers and closers, counted to tell a one-line definition from a longer one. */
const OPENERS = /\b(?:function|if|do|repeat)\b/g;
const CLOSERS = /\b(?:end|until)\b/g;
const COMMENTS = /--\[(=*)\[[\s\S]*?\]\1\]|--[^\n]*/g;
const STRINGS = /'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"/g;
const NAMES = /[A-Za-z_]\w*/g;

const code = (text: string) => text.replace(COMMENTS, ' ').replace(STRINGS, "''");
const count = (text: string, pattern: RegExp) => text.match(pattern)?.length ?? 0;

/**
 * A composed script without the top-level `local function`s nothing it keeps names: every other
 * statement is kept, and a function is kept once a kept line names it (to a fixed point). Redis
 * runs a script's whole body on every call, so each part's unused helpers cost every call the
 * making of their closures (a command of the fair gate: ~28 µs a call for all its parts'
 * definitions, ~20 once shaken). A top-level definition is one line whose blocks close on it,
 * or runs to the next line that starts with `end` (the style of every `.lua` file here).
 * Dropping a function has no effect but its absence: a definition runs no code.
 */
export function shakeLua(lua: string): string {
  const lines = lua.split('\n');
  const blocks: { name?: string; text: string }[] = [];
  let plain: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const definition = LOCAL_FUNCTION.exec(lines[i]);
    if (!definition) {
      plain.push(lines[i]);
      continue;
    }
    let last = i;
    const first = code(lines[i]);
    if (count(first, OPENERS) > count(first, CLOSERS)) {
      while (last + 1 < lines.length && !/^end\b/.test(lines[last + 1])) last++;
      last++;
    }
    if (plain.length) blocks.push({ text: plain.join('\n') });
    plain = [];
    blocks.push({ name: definition[1], text: lines.slice(i, last + 1).join('\n') });
    i = last;
  }
  if (plain.length) blocks.push({ text: plain.join('\n') });
  const named = new Set<string>();
  const kept = new Set<(typeof blocks)[number]>();
  const keep = (block: (typeof blocks)[number]) => {
    kept.add(block);
    const body = block.name ? block.text.replace(LOCAL_FUNCTION, '(') : block.text;
    for (const name of code(body).match(NAMES) ?? []) named.add(name);
  };
  for (const block of blocks) if (!block.name) keep(block);
  for (let grew = true; grew;) {
    grew = false;
    for (const block of blocks) {
      if (block.name && !kept.has(block) && named.has(block.name)) {
        keep(block);
        grew = true;
      }
    }
  }
  return blocks
    .filter((block) => kept.has(block))
    .map((block) => block.text)
    .join('\n');
}
