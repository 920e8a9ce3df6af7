/**
 * Which source file defines a traced function. Debian's modules keep their symbol table but
 * no DWARF (`file` says "not stripped"; there is no .debug_info section), so the mapping is
 * by the line's own source, the set-up's `$RDMA_INTEROP_CACHE/linux-src/<version>/`
 * (scripts/lib/kernel-module.sh): a definition is a line at column 0 naming the function
 * before its `(` and not ending in `;` (a prototype). Compiler suffixes (`.isra.0`,
 * `.constprop.0`, `.part.0`, `.cold`) are dropped first. Functions of modules whose source
 * the cache does not hold (ib_core, ib_uverbs) map to no file.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from '../runtime/paths.js';

/** The module's driver folder under the kernel tree. */
const MODULE_DIRS: Readonly<Record<string, string>> = {
  rdma_rxe: 'drivers/infiniband/sw/rxe',
  siw: 'drivers/infiniband/sw/siw',
};

/** The function name without the compiler's clone suffix. */
export function baseName(fn: string): string {
  const dot = fn.indexOf('.');
  return dot < 0 ? fn : fn.slice(0, dot);
}

/** name -> file, from C sources given as (file name, text) pairs. */
export function definitionIndex(
  files: readonly { name: string; text: string }[],
): Map<string, string> {
  const index = new Map<string, string>();
  for (const { name, text } of files)
    for (const line of text.split('\n')) {
      if (!/^[A-Za-z_]/.test(line) || line.trimEnd().endsWith(';')) continue;
      if (/^(?:return|if|else|for|while|switch|do|typedef|struct \w+ \{|enum|union)\b/.test(line))
        continue;
      const m = /([A-Za-z_]\w*)\s*\(/.exec(line);
      if (m === null) continue;
      const fn = m[1] as string;
      if (/^[A-Z0-9_]+$/.test(fn)) continue; // a macro (MODULE_LICENSE, EXPORT_SYMBOL ...)
      if (!index.has(fn)) index.set(fn, name);
    }
  return index;
}

/** The cached source folder of a kernel release's line (the newest of its versions). */
export function sourceDirOf(kernelRelease: string, root = cacheRoot()): string | undefined {
  const series = kernelRelease.split('.').slice(0, 2).join('.');
  const base = join(root, 'linux-src');
  if (!existsSync(base)) return undefined;
  const dirs = readdirSync(base)
    .filter((d) => d.startsWith(`${series}.`))
    .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  const last = dirs.at(-1);
  return last === undefined ? undefined : join(base, last);
}

/** module -> (function -> file), for the modules whose source is in the cache. */
export function functionFiles(
  kernelRelease: string,
  root = cacheRoot(),
): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  const src = sourceDirOf(kernelRelease, root);
  if (src === undefined) return out;
  for (const [module, dir] of Object.entries(MODULE_DIRS)) {
    const at = join(src, dir);
    if (!existsSync(at)) continue;
    const files = readdirSync(at)
      .filter((f) => f.endsWith('.c'))
      .sort()
      .map((f) => ({ name: f, text: readFileSync(join(at, f), 'utf8') }));
    out.set(module, definitionIndex(files));
  }
  return out;
}
