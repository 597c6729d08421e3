#!/usr/bin/env node
/**
 * `npm run docs`: builds the API reference (TypeDoc, Markdown in docs/api/, warnings are errors)
 * and the generated part of docs/errors.md.
 * `npm run docs:check` (part of `npm test`): builds the reference aside and fails when the
 * committed docs/api/ or docs/errors.md is not what `npm run docs` would write.
 */
const { execFileSync } = require('node:child_process');
const { mkdtempSync, readFileSync, readdirSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, relative } = require('node:path');
const errors = require('./docs-errors');

const ROOT = join(__dirname, '..');
const API = join(ROOT, 'docs', 'api');
const check = process.argv.includes('--check');

function typedoc(out) {
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typedoc', 'bin', 'typedoc'), '--out', out], {
    cwd: ROOT,
    stdio: 'inherit',
  });
}

function files(folder) {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(folder, join(entry.parentPath, entry.name)))
    .sort();
}

if (!check) {
  rmSync(API, { recursive: true, force: true });
  typedoc(API);
  require('node:fs').writeFileSync(errors.PAGE, errors.page());
} else {
  const aside = mkdtempSync(join(tmpdir(), 'tq-api-'));
  try {
    typedoc(aside);
    const built = files(aside);
    const committed = files(API);
    const stale = [
      ...built.filter((f) => !committed.includes(f) || readFileSync(join(aside, f), 'utf8') !== readFileSync(join(API, f), 'utf8')),
      ...committed.filter((f) => !built.includes(f)),
    ].map((f) => `docs/api/${f}`);
    if (errors.page() !== readFileSync(errors.PAGE, 'utf8')) stale.push('docs/errors.md');
    if (stale.length) {
      console.error(`Out of date (run \`npm run docs\` and commit):\n  ${stale.join('\n  ')}`);
      process.exit(1);
    }
    console.log(`docs/api (${built.length} pages) and docs/errors.md are up to date.`);
  } finally {
    rmSync(aside, { recursive: true, force: true });
  }
}
