/**
 * The documentation's examples that need real RDMA devices (they import
 * `rdma-interop/verbs`, or are marked `device`), run on rxe0/siw0 in the guest. The host
 * project type-checks them (test/host/docs/examples.test.ts); here they are transpiled
 * and run, each checking its own results.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
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
