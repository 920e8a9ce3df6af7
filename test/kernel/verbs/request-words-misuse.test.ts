/**
 * Issue 34, the one request form (src/native/request-layout.ts, native/work_request.cc
 * SendList::Parse): words and handles the TS layer did not write are refused with a typed
 * error before anything is posted, on both back ends, never a crash: an opcode past 255,
 * an SGE count past the end, a BIND_MW naming no window, a handle index past the list, a
 * handle of the wrong kind, a remote QPN past 24 bits, a closed AH.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { WR_OPCODE } from '../../../src/ibverbs/index.js';
import type { NativeHandle } from '../../../src/native/bindings.js';
import { SEND_LAYOUT as L, SEND_WORDS } from '../../../src/native/request-layout.js';
import { VerbsArgumentError, VerbsError } from '../../../src/verbs/index.js';
import { rxeLoopback } from './fixtures.js';
import { NONE, ownResources } from './resources.js';

/** What a call threw: `VerbsArgumentError <field>`, the VerbsError's code, or `posted`. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof VerbsArgumentError) return `VerbsArgumentError ${e.field}`;
    if (e instanceof VerbsError) return e.code;
    return `${(e as Error).name}: ${(e as Error).message}`;
  }
  return 'posted';
}

/** One SEND request with no SGE, `edit` applied to its words. */
function words(edit: (w: Uint32Array) => void): Uint32Array {
  const w = new Uint32Array(SEND_WORDS);
  w[L.wrId] = 0x5a17;
  w[L.opcode] = 2; // IBV_WR_SEND
  edit(w);
  return w;
}

describe('request words the TS layer did not write (rxe0)', () => {
  afterAll(() => expect(ownResources()).toEqual(NONE));

  for (const ex of [false, true]) {
    it(`${ex ? 'ibv_wr_*' : 'ibv_post_send'}: refused before the doorbell, nothing posted`, () => {
      const lo = rxeLoopback({ extended: ex, memoryWindowOps: ex });
      try {
        const mr = lo.pd.allocMr(16, ['LOCAL_WRITE']);
        const ah = lo.pd.createAh({ grh: { dgid: lo.gid.gid, sgidIndex: lo.gid.index } });
        const post = (w: Uint32Array, handles: readonly NativeHandle[] = []) =>
          refusal(() => lo.a.native.postSend(w, 1, handles, ex));
        expect(post(words((w) => (w[L.opcode] = 256)))).toBe('VerbsArgumentError wrs[0].opcode');
        expect(post(words((w) => (w[L.numSge] = 1)))).toBe('VerbsArgumentError words');
        expect(post(words((w) => (w[L.opcode] = WR_OPCODE.BIND_MW)))).toBe(
          'VerbsArgumentError wrs[0].handle',
        );
        expect(
          post(
            words((w) => (w[L.handle] = 2)),
            [ah.native],
          ),
        ).toBe('VerbsArgumentError wrs[0].handle');
        expect(
          post(
            words((w) => (w[L.handle] = 1)),
            [mr.native],
          ),
        ).toMatch(/^VerbsArgumentError/);
        expect(post(words((w) => (w[L.remoteQpn] = 1 << 24)))).toBe(
          'VerbsArgumentError wrs[0].remoteQpn',
        );
        expect(post(new Uint32Array(4))).toBe('VerbsArgumentError words');
        expect(refusal(() => lo.a.native.postSend([1] as never, 1, [], ex))).toBe(
          'VerbsArgumentError words',
        );
        ah.close();
        expect(
          post(
            words((w) => (w[L.handle] = 1)),
            [ah.native],
          ),
        ).toBe('EBADF');
        expect(lo.a.inFlight.send).toBe(0);
        expect(lo.cq.poll(4)).toEqual([]);
        mr.close();
      } finally {
        lo.close();
      }
    });
  }
});
