/**
 * No value import cycle among the verbs layer's modules (issue 34: qp.ts <-> recv-packer.ts
 * was one until the requests moved to src/verbs/requests/). Type-only imports are erased
 * and cannot cycle at run time, so they are not edges here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve('src');
const LAYERS = ['verbs', 'native'];

/** Every .ts file under `dir`. */
function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? tsFiles(join(dir, e.name))
      : e.name.endsWith('.ts')
        ? [join(dir, e.name)]
        : [],
  );
}

const IMPORT = /^(?:import|export)\s+(type\s+)?(\{[^}]*\}|[^'";]*?)\s*from\s*'(\.[^']+)\.js'/gm;

/** The relative modules `file` imports for their values (not `import type`, not all-`type` lists). */
function valueImports(file: string): string[] {
  const out: string[] = [];
  for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
    if (m[1] !== undefined) continue;
    const what = (m[2] ?? '').trim();
    if (what.startsWith('{')) {
      const names = what
        .slice(1, -1)
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      if (names.length > 0 && names.every((n) => n.startsWith('type '))) continue;
    }
    out.push(resolve(dirname(file), `${m[3]}.ts`));
  }
  return out;
}

/** The strongly connected groups of more than one module (Tarjan). */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (stack.includes(w)) {
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
      }
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        group.push(relative(ROOT, w));
      } while (w !== v);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('module graph of the verbs layer', () => {
  it('has no value import cycle in src/verbs or src/native', () => {
    const files = LAYERS.flatMap((l) => tsFiles(join(ROOT, l)));
    const known = new Set(files);
    const graph = new Map(files.map((f) => [f, valueImports(f).filter((d) => known.has(d))]));
    // The check can fail: an edge it follows (qp.ts imports the packers for their values).
    expect(graph.get(join(ROOT, 'verbs', 'qp.ts'))).toContain(
      join(ROOT, 'verbs', 'requests', 'send-packer.ts'),
    );
    expect(cycles(graph)).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    const a = join(ROOT, 'a.ts');
    const b = join(ROOT, 'b.ts');
    expect(
      cycles(
        new Map([
          [a, [b]],
          [b, [a]],
        ]),
      ),
    ).toEqual([['a.ts', 'b.ts']]);
  });
});
