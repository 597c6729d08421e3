import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TENANT_KEY_PART_LUA } from '../context/tenant-key';
import { composeLua } from './lua-includes';

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
