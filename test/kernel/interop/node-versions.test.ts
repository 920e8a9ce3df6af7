/**
 * The suite on the other Node versions the project supports (issue 24): the test command
 * itself runs on Node 24 (scripts/test.sh); here a bounded selection of the suite (rxe0
 * through both post APIs, siw0, immediate data, an atomic) runs once more on the lowest
 * version engines.node claims and on the current release, each a fresh CLI process that
 * loads the one prebuilt N-API addon. The binaries come from the npm registry at set-up
 * (scripts/ci/min-node.sh). Every scenario must pass as it does on Node 24.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheRoot } from '../../../src/runtime/index.js';

const root = process.env.RDMA_INTEROP_ROOT ?? process.cwd();
const { engines } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  engines: { node: string };
};
const LOWEST = engines.node.replace(/^>=\s*/, '');
const CURRENT = '26.10.0';
const SELECTION =
  '{rxe-fetch-add,rxe-fetch-add-ex,rxe-write-imm,rxe-cmp-swap-match-ex,siw-write,siw-send,siw-read}';

describe('the suite on the lowest and the current Node', () => {
  for (const version of [LOWEST, CURRENT]) {
    it(`Node ${version}: a selection of the suite passes`, () => {
      const node = join(cacheRoot(), `node-v${version}`, 'bin', 'node');
      expect(existsSync(node), `${node} (scripts/ci/min-node.sh ${version})`).toBe(true);
      const report = mkdtempSync(join(tmpdir(), `suite-node-${version}-`));
      execFileSync(
        node,
        [
          join(root, 'dist/cli/main.js'),
          'run',
          '--runtime',
          'host',
          '--scenario',
          SELECTION,
          '--report',
          report,
        ],
        { stdio: ['ignore', 'ignore', 'pipe'], timeout: 240_000 },
      );
      const results = JSON.parse(readFileSync(join(report, 'results.json'), 'utf8'));
      expect(results.environment.node).toBe(`v${version}`);
      expect(results.scenarios.map((s: { id: string }) => s.id).sort()).toEqual([
        'rxe-cmp-swap-match-ex',
        'rxe-fetch-add',
        'rxe-fetch-add-ex',
        'rxe-write-imm',
        'siw-read',
        'siw-send',
        'siw-write',
      ]);
      expect(results.totals.passed).toBe(7);
    }, 300_000);
  }
});
