/**
 * The package's public surface as tests see it: each entry point of package.json
 * "exports" (but ./package.json) with its built module under dist/, and the names it
 * exports, values (what `Object.keys(await import(...))` lists) and types (from the
 * TypeScript checker over the built declarations).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { ROOT } from '../docs/examples.js';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { types: string; default: string }>;
};

export interface EntryPoint {
  /** The subpath as package.json names it: `.`, `./codec`, ... */
  readonly subpath: string;
  /** The built JavaScript module. */
  readonly module: string;
  /** Its declarations. */
  readonly declarations: string;
}

/** Every code entry point of package.json "exports". */
export const ENTRY_POINTS: readonly EntryPoint[] = Object.entries(pkg.exports).flatMap(
  ([subpath, target]) =>
    typeof target === 'string'
      ? []
      : [
          {
            subpath,
            module: join(ROOT, target.default),
            declarations: join(ROOT, target.types),
          },
        ],
);

/** The names each entry point's declarations export that are types only, sorted. */
export function typeOnlyExports(): Record<string, string[]> {
  const program = ts.createProgram(
    ENTRY_POINTS.map((e) => e.declarations),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      skipLibCheck: true,
      types: ['node'],
    },
  );
  const checker = program.getTypeChecker();
  const out: Record<string, string[]> = {};
  for (const entry of ENTRY_POINTS) {
    const file = program.getSourceFile(entry.declarations);
    const module = file === undefined ? undefined : checker.getSymbolAtLocation(file);
    if (module === undefined) throw new Error(`no declarations at ${entry.declarations}`);
    out[entry.subpath] = checker
      .getExportsOfModule(module)
      .filter((s) => {
        const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
        return (target.flags & ts.SymbolFlags.Value) === 0;
      })
      .map((s) => s.name)
      .sort();
  }
  return out;
}
