import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TENANT_KEY_PART_LUA } from '../context/tenant-key';
import { composeLua, shakeLua } from './lua-includes';

describe('composeLua', () => {
  let dir: string;
  const write = (file: string, text: string) => {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), text);
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tq-lua-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('puts every part after the parts it includes, the command last, without include lines', () => {
    write('base.lua', '-- base\nlocal a = 1');
    write('modes/m/mode.lua', '--- @include "../../base"\nlocal m = a');
    write('cmd.lua', '--- @include "modes/m/mode"\n--- @include "base"\nreturn m');
    expect(composeLua(dir, 'cmd.lua')).toBe('-- base\nlocal a = 1\nlocal m = a\nreturn m');
  });

  it('includes a part once however many files include it, in first-included order', () => {
    write('keys.lua', 'K');
    write('a.lua', '--- @include "keys"\nA');
    write('b.lua', '--- @include "keys"\n--- @include "a"\nB');
    write('cmd.lua', '--- @include "b"\n--- @include "a"\n--- @include "keys"\nC');
    expect(composeLua(dir, 'cmd.lua').split('\n')).toEqual(['K', 'A', 'B', 'C']);
  });

  it('takes a part kept in TypeScript by name', () => {
    write('cmd.lua', '--- @include "@core/tenant-key"\nreturn tkp(ARGV[1])');
    expect(composeLua(dir, 'cmd.lua')).toBe(`${TENANT_KEY_PART_LUA}\nreturn tkp(ARGV[1])`);
  });

  it('leaves a file without includes as it is', () => {
    write('plain.lua', '--[[ header ]]\n-- @include "not-an-include"\nreturn 1\n');
    expect(composeLua(dir, 'plain.lua')).toBe(
      '--[[ header ]]\n-- @include "not-an-include"\nreturn 1\n',
    );
  });

  it('throws on a cycle, naming the files in it', () => {
    write('a.lua', '--- @include "b"\nA');
    write('b.lua', '--- @include "sub/c"\nB');
    write('sub/c.lua', '--- @include "../a"\nC');
    write('cmd.lua', '--- @include "a"\nreturn 1');
    expect(() => composeLua(dir, 'cmd.lua')).toThrow(
      'Lua include cycle: a.lua -> b.lua -> sub/c.lua -> a.lua',
    );
  });

  it('throws on a missing file, naming it and the file that includes it', () => {
    write('a.lua', '--- @include "gone"\nA');
    write('cmd.lua', '--- @include "a"\nreturn 1');
    expect(() => composeLua(dir, 'cmd.lua')).toThrow(
      'Lua file missing: gone.lua (included by a.lua)',
    );
    expect(() => composeLua(dir, 'nope.lua')).toThrow('Lua file missing: nope.lua');
  });
});

describe('shakeLua', () => {
  const lua = [
    '--[[ header: unused() is named here only in a comment ]]',
    'local base = KEYS[1]',
    "local function key(t) return base .. ':' .. t end",
    "local function unused(t) return 'unused' end",
    'local function helper(t)',
    '  if t then',
    '    return key(t)',
    '  end',
    'end',
    'local function orphan(t)',
    '  return helper(t) -- orphan uses helper, but nothing uses orphan',
    'end',
    'local function main(t)',
    '  local s = "helper2 is only in a string"',
    '  return helper(t), s',
    'end',
    'local function helper2() return 1 end',
    'return main(ARGV[1])',
  ].join('\n');

  it('drops the top-level functions nothing kept names, to a fixed point, and keeps the rest', () => {
    const shaken = shakeLua(lua);
    expect(shaken).toBe(
      [
        '--[[ header: unused() is named here only in a comment ]]',
        'local base = KEYS[1]',
        "local function key(t) return base .. ':' .. t end",
        'local function helper(t)',
        '  if t then',
        '    return key(t)',
        '  end',
        'end',
        'local function main(t)',
        '  local s = "helper2 is only in a string"',
        '  return helper(t), s',
        'end',
        'return main(ARGV[1])',
      ].join('\n'),
    );
  });

  it('keeps a one-line definition whose body opens a block on the next lines as one block', () => {
    const text = ['local function f(x) if x then', '  return 1', 'end end', 'return f(1)'].join(
      '\n',
    );
    // The first line opens two blocks and closes none: the definition runs to the `end` line.
    expect(shakeLua(text)).toBe(text);
  });

  it('leaves a script without top-level functions as it is', () => {
    expect(shakeLua('local a = 1\nreturn a\n')).toBe('local a = 1\nreturn a\n');
  });
});
