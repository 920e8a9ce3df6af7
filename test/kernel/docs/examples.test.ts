/**
 * The documentation's examples that need real RDMA devices (they import
 * `rdma-interop/verbs`, or are marked `device`), run on rxe0/siw0 in the guest. The host
 * project type-checks them (test/host/docs/examples.test.ts); here they are transpiled
 * and run, each checking its own results. The first verbs example is also plain JavaScript
 * (docs/verbs.md says so): it runs as written, untranspiled, on the floor engines.node
 * claims (a Node 22, where regMr refuses and allocMr is the way) and on the maintenance
 * LTS (24); this file itself runs on CI's Node (26).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FLOOR, MAINTENANCE, nodeBinary } from '../../helpers/node-versions.js';
import {
  allBlocks,
  EXAMPLES_DIR,
  KNOWN_BROKEN,
  needsDevices,
  ordinal,
  runModule,
  transpileBlock,
} from '../../host/docs/examples.js';

const blocks = allBlocks();
const deviceBlocks = blocks.filter((b) => b.language === 'ts' && needsDevices(b));

describe('documentation examples on real devices', () => {
  it('there are device examples (docs/verbs.md)', () => {
    expect(deviceBlocks.map((b) => b.file)).toContain('docs/verbs.md');
  });

  for (const block of deviceBlocks) {
    const name = ordinal(blocks, block);
    const test = Object.hasOwn(KNOWN_BROKEN, name) ? it.fails : it;
    test(`${name} runs and its assertions hold (${block.id})`, async () => {
      const file = await transpileBlock(block, join(EXAMPLES_DIR, 'kernel'));
      const r = runModule(file, process.execPath, 240_000);
      expect(r.signal, r.stderr).toBeNull();
      expect(r.status, r.stderr).toBe(0);
    }, 300_000); // under TCG and a loaded host, importing TypeScript alone takes seconds
  }
});

/** The other Node binaries set-up installs into the cache: the floor and the maintenance LTS. */
function cachedNodes(): string[] {
  return [FLOOR, MAINTENANCE].map(nodeBinary);
}

describe('the first verbs example is plain JavaScript that runs on every supported Node', () => {
  const first = blocks.find((b) => b.file === 'docs/verbs.md' && b.language === 'ts');
  it.each(cachedNodes().map((n) => [n] as const))(
    'as .mjs with %s',
    (node) => {
      expect(first, 'docs/verbs.md has a ts example').toBeDefined();
      const dir = join(EXAMPLES_DIR, 'plain');
      mkdirSync(dir, { recursive: true });
      const file = join(dir, 'verbs-first.mjs');
      writeFileSync(file, first?.code ?? '');
      const r = runModule(file, node, 240_000);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
    },
    300_000,
  );
});

describe(`the verbs examples with \`using\` run as plain JavaScript on Node ${MAINTENANCE}`, () => {
  // Node 24 (V8 13.6) has explicit resource management: `using` needs no compiler there.
  const withUsing = deviceBlocks.filter((b) => /^\s*(await )?using /m.test(b.code));
  it('there are such examples', () => {
    expect(withUsing.length).toBeGreaterThan(0);
  });
  for (const block of withUsing) {
    it(`${ordinal(blocks, block)} as .mjs with \`using\` kept (${block.id})`, async () => {
      const file = await transpileBlock(block, join(EXAMPLES_DIR, 'node24'), 'esnext');
      expect(readFileSync(file, 'utf8')).toMatch(/^\s*(await )?using /m);
      const r = runModule(file, nodeBinary(MAINTENANCE), 240_000);
      expect(r.signal, r.stderr).toBeNull();
      expect(r.status, r.stderr).toBe(0);
    }, 300_000);
  }
});
