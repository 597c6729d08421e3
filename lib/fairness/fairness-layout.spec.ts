import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FAIR_MODES } from './modes';

/**
 * The fairness folder's shape (issue 25, item 4; DESIGN §8): a small gate plus modes, each mode a
 * folder with its `*.mode.ts` listed in `FAIR_MODES`. The gate file grew past its bound once
 * without anyone noticing; this keeps the shape from drifting again.
 */
describe('fairness layout', () => {
  const modes = join(__dirname, 'modes');

  it('keeps fair-gate.ts within 250 lines', () => {
    const lines = readFileSync(join(__dirname, 'fair-gate.ts'), 'utf8').trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(250);
  });

  it('has one folder per mode, each with its .mode.ts, and every one listed in FAIR_MODES', () => {
    const folders = readdirSync(modes, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    for (const folder of folders) {
      const files = readdirSync(join(modes, folder));
      expect({ folder, modeFiles: files.filter((f) => f.endsWith('.mode.ts')).length }).toEqual({
        folder,
        modeFiles: 1,
      });
    }
    const index = readFileSync(join(modes, 'index.ts'), 'utf8');
    const imported = [...index.matchAll(/from '\.\/([\w-]+)\/[\w.-]+\.mode'/g)].map((m) => m[1]);
    expect(imported.sort()).toEqual(folders);
    expect(FAIR_MODES).toHaveLength(folders.length);
  });
});
