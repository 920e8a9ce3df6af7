/**
 * Issue 8, inline raw SGE: an inline post whose SGE is a raw, unmapped address made the
 * provider memcpy from it and segfaulted the process, on both post paths. Now the
 * wrapper refuses a raw SGE with `inline` (VerbsArgumentError), and the addon itself
 * refuses inline data outside the live MRs of the QP's PD (VerbsError EINVAL with the
 * request's index), so even a direct native call cannot crash. Runs in a child process.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const VERBS = resolve('dist/verbs/index.js');
const PACKER = resolve('dist/verbs/requests/send-packer.js');

const CHILD = `
const [verbsPath, path, packerPath] = process.argv.slice(1);
Promise.all([import(verbsPath), import(packerPath)]).then(([v, { packSendList }]) => {
  const ctx = v.openDevice('rxe0');
  const gid = ctx.findGid({ type: 'RoCEv2', ipv4: '192.0.2.1' });
  const pd = ctx.allocPd();
  const cq = ctx.createCq({ cqe: 16 });
  const extended = path === 'ex';
  const a = pd.createQp({ sendCq: cq, maxInlineData: 64, extended });
  const b = pd.createQp({ sendCq: cq, maxInlineData: 64, extended });
  v.connectPairByHand(a, b, gid, { aPsn: 1, bPsn: 2 });
  const dst = pd.regMr(Buffer.alloc(64), ['LOCAL_WRITE', 'REMOTE_WRITE']);
  const src = pd.regMr(Buffer.from('inline bytes'), ['LOCAL_WRITE']);
  const report = (name, f) => {
    try { f(); console.log(name + ' posted'); }
    catch (e) { console.log(name + ' ' + e.name + ' ' + (e.code ?? e.field) + ' ' + (e.badWrIndex ?? '-')); }
  };
  const raw = { addr: 0x10n, length: 8, lkey: src.lkey };
  report('wrapper', () => a.postSend({ opcode: 'RDMA_WRITE', inline: true, sgList: [raw], remote: dst.remote() }, path));
  const nativeWr = (sge) => ({ wrId: 9n, opcode: 0, sendFlags: 2 | 8, sgList: [sge], remoteAddr: dst.addr, rkey: dst.rkey });
  const good = { addr: src.addr, length: src.length, lkey: src.lkey };
  // The addon's one request form: the words a list packs into (native/common.h send_word).
  const post = (wrs) => {
    const { words, handles } = packSendList(wrs);
    a.native.postSend(words, wrs.length, handles, path === 'ex');
  };
  report('native', () => post([nativeWr(good), nativeWr(raw)]));
  report('past-end', () => post([nativeWr({ ...good, length: src.length + 4096 })]));
  report('good', () => post([nativeWr(good)]));
  cq.next({ timeoutMs: 20000 }).then(
    (wc) => console.log('completion ' + wc.status + ' ' + dst.buffer.subarray(0, 12).toString()),
    (e) => console.log('no completion: ' + e.message),
  );
});
`;

function runChild(path: 'legacy' | 'ex') {
  return spawnSync(process.execPath, ['-e', CHILD, VERBS, path, PACKER], {
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('inline data from a raw, unmapped address', () => {
  for (const path of ['legacy', 'ex'] as const) {
    it(`${path} path: a JS error, never a crash; registered inline data still works`, () => {
      const r = runChild(path);
      expect(r.stderr).toBe('');
      expect(r.signal).toBeNull();
      expect(r.status).toBe(0);
      expect(r.stdout).toContain('wrapper VerbsArgumentError sgList[0] -');
      // the whole list is refused before the doorbell: request #1 names the bad SGE
      expect(r.stdout).toMatch(/native VerbsError EINVAL 1\n/);
      expect(r.stdout).toMatch(/past-end VerbsError EINVAL 0\n/);
      expect(r.stdout).toContain('good posted');
      // librxe's wr_set_inline_data_list (rdma-core 44) leaves dma.resid at 0, so the
      // ibv_wr_* inline write completes without moving a byte (fixed upstream, "Providers/
      // rxe: ... resid"); the legacy path carries the data.
      expect(r.stdout).toContain(
        path === 'legacy' ? 'completion SUCCESS inline bytes' : 'completion SUCCESS',
      );
    });
  }
});
