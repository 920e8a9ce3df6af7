/**
 * The suite on the other Node versions the project proves (issues 24, 36): the test command
 * itself runs on Node 26, the Active LTS (scripts/test.sh); here a bounded selection of the
 * suite (rxe0 through both post APIs, siw0, immediate data, an atomic) runs once more on
 * the maintenance LTS (24) and on the floor engines.node claims (22), each a fresh CLI
 * process that loads the one prebuilt N-API addon. The versions are named once
 * (test/helpers/node-versions.ts); the binaries come from the npm registry at set-up
 * (scripts/ci/min-node.sh). Every scenario must pass as it does on CI's Node.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FLOOR, MAINTENANCE, nodeBinary } from '../../helpers/node-versions.js';

const root = process.env.RDMA_INTEROP_ROOT ?? process.cwd();
const SELECTION =
  '{rxe-fetch-add,rxe-fetch-add-ex,rxe-write-imm,rxe-cmp-swap-match-ex,siw-write,siw-send,siw-read}';

describe('the suite on the maintenance LTS and the floor', () => {
  for (const version of [MAINTENANCE, FLOOR]) {
    it(`Node ${version}: a selection of the suite passes`, () => {
      const node = nodeBinary(version);
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
