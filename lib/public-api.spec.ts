import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import * as ts from 'typescript';

const ROOT = resolve(__dirname, '..');
const SNAPSHOT = join(__dirname, 'public-api.snapshot.json');
/** Set to write the snapshot from the code (after a deliberate change of the public API). */
const UPDATE = process.env.UPDATE_PUBLIC_API === '1';

/** The names one entry point gives, values and types apart, each list sorted. */
interface Surface {
  values: string[];
  types: string[];
}

/** Each entry point of package.json's `exports`, as the lib/ file it is built from. */
function entryPoints(): Map<string, string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { default: string }>;
  };
  const entries = new Map<string, string>();
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string') continue; // ./package.json
    const source = target.default.replace(/^\.\/dist\//, 'lib/').replace(/\.js$/, '.ts');
    entries.set(subpath, join(ROOT, source));
  }
  return entries;
}

function program(files: string[]): ts.Program {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    { noEmit: true },
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  )!;
  return ts.createProgram(files, config.options);
}

/**
 * The tags of an exported declaration's doc comment. A name bound by destructuring
 * (`export const { A, B } = ...`) has its comment on the statement, which `getJsDocTags` skips.
 */
function tagsOf(symbol: ts.Symbol, checker: ts.TypeChecker): string[] {
  const tags = symbol.getJsDocTags(checker).map((tag) => tag.name);
  for (const declaration of symbol.declarations ?? []) {
    let node: ts.Node = declaration;
    while (ts.isBindingElement(node) || ts.isObjectBindingPattern(node)) node = node.parent;
    if (ts.isVariableDeclaration(node) && node !== declaration) {
      const statement = node.parent.parent;
      tags.push(...ts.getJSDocTags(statement).map((tag) => tag.tagName.text));
    }
  }
  return tags;
}

describe('the public API', () => {
  const entries = entryPoints();
  const built = program([...entries.values()]);
  const checker = built.getTypeChecker();
  /** Entry point -> exported name -> the symbol it stands for. */
  const exported = new Map<string, Map<string, ts.Symbol>>();
  for (const [subpath, file] of entries) {
    const source = built.getSourceFile(file);
    if (!source) throw new Error(`entry point ${subpath}: ${file} is missing`);
    const names = new Map<string, ts.Symbol>();
    for (const symbol of checker.getExportsOfModule(checker.getSymbolAtLocation(source)!)) {
      const target =
        symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      names.set(symbol.name, target);
    }
    exported.set(subpath, names);
  }

  it('is the committed list of names (lib/public-api.snapshot.json)', () => {
    const surface: Record<string, Surface> = {};
    for (const [subpath, names] of exported) {
      const sorted = [...names].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      surface[subpath] = {
        values: sorted.filter(([, s]) => s.flags & ts.SymbolFlags.Value).map(([name]) => name),
        types: sorted.filter(([, s]) => !(s.flags & ts.SymbolFlags.Value)).map(([name]) => name),
      };
    }
    const text = `${JSON.stringify(surface, null, 2)}\n`;
    if (UPDATE) writeFileSync(SNAPSHOT, text);
    const committed = JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as Record<string, Surface>;
    // A difference is a change of the public API: make it on purpose, then run this test once
    // with UPDATE_PUBLIC_API=1 and commit the snapshot with the change.
    expect(surface).toEqual(committed);
    expect(surface['.'].values.length + surface['.'].types.length).toBeGreaterThan(100);
  });

  it('marks every exported declaration @publicApi, none @internal', () => {
    const unmarked: string[] = [];
    const internal: string[] = [];
    for (const [subpath, names] of exported) {
      for (const [name, symbol] of names) {
        const file = symbol.declarations?.[0]?.getSourceFile().fileName ?? '?';
        const where = `${subpath}: ${name} (${relative(ROOT, file)})`;
        const tags = tagsOf(symbol, checker);
        if (!tags.includes('publicApi')) unmarked.push(where);
        if (tags.includes('internal')) internal.push(where);
      }
    }
    expect(unmarked).toEqual([]);
    expect(internal).toEqual([]);
  });

  it('sees a missing mark and a name bound by destructuring', () => {
    const file = join(ROOT, 'lib', '__public-api-probe__.ts');
    const probe = [
      '/** Marked.\n * @publicApi\n */ export const marked = 1;',
      '/** Not marked. */ export const unmarked = 2;',
      '/**\n * Both.\n * @publicApi\n */ export const { a: fromA, b: fromB } = { a: 1, b: 2 };',
    ].join('\n');
    const host = ts.createCompilerHost({ noEmit: true });
    const { getSourceFile } = host;
    host.getSourceFile = (path, language, onError) =>
      path === file
        ? ts.createSourceFile(path, probe, language, true)
        : getSourceFile.call(host, path, language, onError);
    const probed = ts.createProgram([file], { noEmit: true, types: [] }, host);
    const probeChecker = probed.getTypeChecker();
    const symbols = probeChecker.getExportsOfModule(
      probeChecker.getSymbolAtLocation(probed.getSourceFile(file)!)!,
    );
    const marks = Object.fromEntries(
      symbols.map((s) => [s.name, tagsOf(s, probeChecker).includes('publicApi')]),
    );
    expect(marks).toEqual({ marked: true, unmarked: false, fromA: true, fromB: true });
  });
});
