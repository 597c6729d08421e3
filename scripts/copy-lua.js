// Copies the Lua scripts next to their compiled loaders in dist/.
const { cpSync, readdirSync, statSync, mkdirSync } = require('node:fs');
const { join, dirname } = require('node:path');

function walk(dir) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) walk(path);
    else if (path.endsWith('.lua')) {
      const target = join('dist', path.slice('lib/'.length));
      mkdirSync(dirname(target), { recursive: true });
      cpSync(path, target);
    }
  }
}
walk('lib');
