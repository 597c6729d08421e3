#!/usr/bin/env node
// Folder-level import graph of lib/: each first-level folder (or root file) is a node; prints the
// imports that cross folders and fails (exit 1) on any folder-level cycle.
// Usage: node scripts/folder-graph.js [--edges] [--depth=2]
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const root = path.join(__dirname, '..', 'lib');
const showEdges = process.argv.includes('--edges');
const depthArg = process.argv.find((a) => a.startsWith('--depth='));
const depth = depthArg ? Number(depthArg.slice(8)) : 1;

function walk(dir, out) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, out);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) out.push(full);
  }
  return out;
}

/** The node a file belongs to: its folder path below lib/ up to `depth` levels (core/x counts as 2). */
function nodeOf(file) {
  const rel = path.relative(root, file).split(path.sep);
  const dirs = rel.slice(0, -1);
  if (dirs.length === 0) return rel[0].replace(/\.ts$/, '');
  const d = dirs[0] === "core" && !process.argv.includes("--core-as-one") ? depth + 1 : depth;
  return dirs.slice(0, d).join('/');
}

function resolve(from, spec) {
  const base = path.resolve(path.dirname(from), spec);
  for (const candidate of [base + '.ts', path.join(base, 'index.ts')]) {
    if (fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

const files = walk(root, []);
const edges = new Map(); // node -> Map(node -> [file -> import])
for (const file of files) {
  const info = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
  for (const ref of info.importedFiles) {
    if (!ref.fileName.startsWith('.')) continue;
    const target = resolve(file, ref.fileName);
    if (!target) continue;
    const a = nodeOf(file);
    const b = nodeOf(target);
    if (a === b) continue;
    if (!edges.has(a)) edges.set(a, new Map());
    const m = edges.get(a);
    if (!m.has(b)) m.set(b, []);
    m.get(b).push(`${path.relative(root, file)} -> ${ref.fileName}`);
  }
}

// Tarjan's strongly connected components.
const nodes = [...new Set([...files.map(nodeOf)])].sort();
let index = 0;
const idx = new Map();
const low = new Map();
const stack = [];
const on = new Set();
const sccs = [];
function strong(v) {
  idx.set(v, index);
  low.set(v, index++);
  stack.push(v);
  on.add(v);
  for (const w of (edges.get(v) ?? new Map()).keys()) {
    if (!idx.has(w)) {
      strong(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
  }
  if (low.get(v) === idx.get(v)) {
    const c = [];
    let w;
    do {
      w = stack.pop();
      on.delete(w);
      c.push(w);
    } while (w !== v);
    if (c.length > 1) sccs.push(c.sort());
  }
}
for (const n of nodes) if (!idx.has(n)) strong(n);

const edgeCount = [...edges.values()].reduce((s, m) => s + m.size, 0);
console.log(`lib/: ${files.length} files, ${nodes.length} folder nodes, ${edgeCount} folder edges`);
if (showEdges) {
  for (const [a, m] of [...edges].sort()) {
    for (const [b, list] of [...m].sort()) console.log(`  ${a} -> ${b} (${list.length})`);
  }
}
if (sccs.length === 0) {
  console.log('no folder-level import cycle');
} else {
  for (const c of sccs) {
    console.log(`cycle of ${c.length}: ${c.join(', ')}`);
    for (const a of c) {
      for (const [b, list] of edges.get(a) ?? []) {
        if (c.includes(b)) for (const l of list) console.log(`    ${a} -> ${b}: ${l}`);
      }
    }
  }
  process.exitCode = 1;
}
