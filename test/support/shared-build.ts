import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A build unused this long is removed when another of its area is written. */
const UNUSED_MS = 24 * 3600_000;
const COMPLETE = '.complete';

/**
 * A build kept for every test file and jest run with the same inputs (`key`, a hash of them):
 * `<temp dir>/<area>/<key>`. A miss runs `build(folder)` in a folder of its own, marks it
 * complete and renames it into place whole: two runs that miss at once both build, one rename
 * wins, and no reader ever sees half a build. Touched on each use; the area's builds unused for a
 * day (and abandoned half-written ones) are removed when a new one is written. Never remove or
 * change the folder returned: other runs may be reading it.
 */
export function sharedBuild(area: string, key: string, build: (folder: string) => void): string {
  const areaDir = join(tmpdir(), area);
  const dir = join(areaDir, key);
  if (!existsSync(join(dir, COMPLETE))) {
    mkdirSync(areaDir, { recursive: true });
    const fresh = mkdtempSync(join(areaDir, 'writing-'));
    try {
      build(fresh);
      writeFileSync(join(fresh, COMPLETE), '');
      try {
        renameSync(fresh, dir);
      } catch (error) {
        // Another run renamed its own (identical) build into place first.
        if (!existsSync(join(dir, COMPLETE))) throw error;
      }
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
    prune(areaDir, dir);
  }
  const now = new Date();
  utimesSync(dir, now, now);
  return dir;
}

function prune(areaDir: string, keep: string): void {
  for (const entry of readdirSync(areaDir)) {
    const path = join(areaDir, entry);
    try {
      if (path !== keep && Date.now() - statSync(path).mtimeMs > UNUSED_MS) {
        rmSync(path, { recursive: true, force: true });
      }
    } catch {
      // removed by another run meanwhile
    }
  }
}
