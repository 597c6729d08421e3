'use strict';
// The declarations the package ships, type-checked against a variant's packages (bullmq 5,
// ioredis 6): `npm run build` writes them with the repository's own bullmq 6, and a type tsc
// inferred there (a method without a return type) can name bullmq 6's generics, which an app on
// bullmq 5 then fails to compile (without `skipLibCheck`). The source's own type-check of a
// variant cannot see this: it checks the source, not the emitted `.d.ts`.
//
// Usage: node scripts/check-declarations.js test/bullmq5
// Emits the declarations into a temporary folder, compiles every entry point's `.d.ts` with the
// variant's packages in place of the repository's, and fails on an error in those files (errors
// inside third-party declarations are not this package's and are left out).
const { execFileSync, spawnSync } = require('node:child_process');
const { mkdtempSync, readdirSync, rmSync, writeFileSync, readFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, resolve } = require('node:path');

const root = join(__dirname, '..');
const variant = resolve(root, process.argv[2] ?? '');
const tsc = join(root, 'node_modules', '.bin', 'tsc');
const out = mkdtempSync(join(tmpdir(), 'tq-dts-'));

try {
  execFileSync(
    tsc,
    ['-p', 'tsconfig.build.json', '--declaration', '--emitDeclarationOnly', '--outDir', out],
    { cwd: root, stdio: 'inherit' },
  );
  // The variant's own packages (scoped ones by their full name) stand in for the repository's.
  const paths = {};
  const modules = join(variant, 'node_modules');
  for (const name of readdirSync(modules)) {
    if (name.startsWith('.')) continue;
    const names = name.startsWith('@')
      ? readdirSync(join(modules, name)).map((inner) => `${name}/${inner}`)
      : [name];
    for (const pkg of names) {
      paths[pkg] = [join(modules, pkg)];
      paths[`${pkg}/*`] = [join(modules, pkg, '*')];
    }
  }
  paths['*'] = [join(root, 'node_modules', '*'), join(root, 'node_modules', '@types', '*')];
  const exported = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).exports;
  const files = Object.values(exported)
    .map((entry) => entry.types)
    .filter(Boolean)
    .map((types) => join(out, types.replace(/^\.\/dist\//, '')));
  const config = join(out, 'tsconfig.check.json');
  writeFileSync(
    config,
    JSON.stringify({
      compilerOptions: {
        noEmit: true,
        strict: true,
        skipLibCheck: false,
        module: 'commonjs',
        moduleResolution: 'node',
        target: 'es2022',
        types: ['node'],
        typeRoots: [join(root, 'node_modules', '@types')],
        baseUrl: root,
        paths,
      },
      files,
    }),
  );
  const run = spawnSync(tsc, ['-p', config], { cwd: root, encoding: 'utf8' });
  const ours = run.stdout
    .split('\n')
    .filter((line) => /^\S.*\(\d+,\d+\): error /.test(line))
    .map((line) => resolve(root, line.slice(0, line.indexOf('('))) + line.slice(line.indexOf('(')))
    .filter((line) => line.startsWith(out));
  if (ours.length > 0) {
    console.error(`The shipped declarations do not compile against ${process.argv[2]}:`);
    for (const line of ours) console.error(`  dist${line.slice(out.length)}`);
    process.exitCode = 1;
  } else {
    console.log(`${files.length} entry points' declarations compile against ${process.argv[2]}.`);
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
