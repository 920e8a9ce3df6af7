/**
 * The libibverbs ABI (src/ibverbs/) is the neutral home of the tables the engine and the
 * verbs wrapper both speak in (issue 20): the two are siblings, so neither imports the
 * other, and src/ibverbs/ imports neither (only the package's argument checks).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../../src');

/** The src/ folders each `.ts` file under `folder` imports from (static and dynamic). */
function importedFolders(folder: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const dir = join(SRC, folder);
  for (const entry of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (!entry.endsWith('.ts')) continue;
    const file = join(dir, entry);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from|import\()\s*'(\.{1,2}\/[^']+)'/g)) {
      const target = relative(SRC, resolve(join(file, '..'), m[1]!));
      const top = target.includes('/') ? target.split('/')[0]! : target;
      if (top === folder) continue;
      const seen = out.get(top) ?? new Set<string>();
      seen.add(relative(SRC, file));
      out.set(top, seen);
    }
  }
  return out;
}

describe('src/ibverbs: engine and verbs are siblings', () => {
  it('verbs/ imports ibverbs/ and nothing of engine/', () => {
    const imports = importedFolders('verbs');
    expect(imports.has('ibverbs')).toBe(true);
    expect([...(imports.get('engine') ?? [])]).toEqual([]);
  });

  it('engine/ imports ibverbs/ and nothing of verbs/ or native/', () => {
    const imports = importedFolders('engine');
    expect(imports.has('ibverbs')).toBe(true);
    expect([...(imports.get('verbs') ?? []), ...(imports.get('native') ?? [])]).toEqual([]);
  });

  it('ibverbs/ imports only the package-wide argument checks', () => {
    expect([...importedFolders('ibverbs').keys()].sort()).toEqual(['arguments.js']);
  });
});
