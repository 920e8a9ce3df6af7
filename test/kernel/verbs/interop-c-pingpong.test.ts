/**
 * Programs written with the wrapper talk to rdma-core's own example programs (issue 34):
 * the wrapper's `ibv_rc_pingpong` (src/bench/rc-pingpong/peer.ts: postRecv, postSend,
 * pollUntil or await cq.next()) against the C `ibv_rc_pingpong` over its TCP address
 * exchange, in both roles, on rxe0, with the data checked both ways:
 * - the C server with `-c` checks that the first byte of every page of the last message it
 *   received is 0 (rc_pingpong.c's validate_buf), and it sends back the buffer it receives
 *   into (one buffer for both), so the wrapper's client gets its own bytes after a round
 *   trip through C;
 * - the C client with `-c` sends its 0x7b-filled buffer with 0 at every page start: the
 *   wrapper's server checks every byte.
 * siw0 is left out: `ibv_rc_pingpong` connects by hand (ibv_modify_qp to RTR/RTS), which
 * siw refuses (its QPs reach RTS only through rdma_cm / iw_cm; docs/verbs.md).
 */
import { describe, expect, it } from 'vitest';
import {
  rcPingPongArgs,
  startExample,
  usecPerIter,
} from '../../../src/bench/rc-pingpong/c-example.js';
import { RC_PINGPONG, roceGidIndex } from '../../../src/bench/rc-pingpong/measure.js';
import { rcPingPong } from '../../../src/bench/rc-pingpong/peer.js';

const DEVICE = 'rxe0';
const ITERS = 200;

/** `size` bytes of `fill` with 0 at every 4096-byte page start (what `-c` checks). */
function pageStartsZero(size: number, fill: number): Buffer {
  const b = Buffer.alloc(size, fill);
  for (let i = 0; i < size; i += 4096) b[i] = 0;
  return b;
}

describe('the wrapper against rdma-core ibv_rc_pingpong on rxe0', () => {
  const gid = roceGidIndex(DEVICE);

  for (const [size, mode, port] of [
    [64, 'poll', 22100],
    [8192, 'events', 22101],
  ] as const) {
    it(`as the client of the C server (-c), ${size} B, ${mode}: the C server finds its check passing and our bytes come back`, async () => {
      const server = startExample(
        RC_PINGPONG,
        rcPingPongArgs({
          device: DEVICE,
          gidIndex: gid,
          size,
          iters: ITERS,
          port,
          events: mode === 'events',
          check: true,
        }),
      );
      const r = await rcPingPong({
        device: DEVICE,
        size,
        iters: ITERS,
        mode,
        port,
        server: '127.0.0.1',
        fill: 0x5a,
        zeroPageStarts: true,
      });
      const c = await server.done;
      expect(c.code, c.err).toBe(0);
      expect(c.out).not.toMatch(/invalid data/);
      expect(c.out).toMatch(new RegExp(`^${ITERS} iters in `, 'm'));
      expect(usecPerIter(c.out)).toBeGreaterThan(0);
      expect([r.sends, r.receives]).toEqual([ITERS, ITERS]);
      expect(r.firstReceived.equals(pageStartsZero(size, 0x5a))).toBe(true);
      expect(r.received.equals(pageStartsZero(size, 0x5a))).toBe(true);
    });
  }

  for (const [size, mode, port] of [
    [4096, 'poll', 22110],
    [64, 'events', 22111],
  ] as const) {
    it(`as the server of the C client (-c), ${size} B, ${mode}: the C client's bytes arrive, then ours echoed`, async () => {
      let client: ReturnType<typeof startExample> | undefined;
      const r = await rcPingPong({
        device: DEVICE,
        size,
        iters: ITERS,
        mode,
        port,
        fill: 0x33,
        listening: () => {
          client = startExample(
            RC_PINGPONG,
            rcPingPongArgs({
              device: DEVICE,
              gidIndex: gid,
              size,
              iters: ITERS,
              port,
              events: mode === 'events',
              check: true,
              server: '127.0.0.1',
            }),
          );
        },
      });
      if (client === undefined) throw new Error('the C client was not started');
      const c = await client.done;
      expect(c.code, c.err).toBe(0);
      expect(c.out).toMatch(new RegExp(`^${ITERS} iters in `, 'm'));
      expect([r.sends, r.receives]).toEqual([ITERS, ITERS]);
      // The C client's own bytes, then (it sends from its receive buffer) ours echoed.
      expect(r.firstReceived.equals(pageStartsZero(size, 0x7b))).toBe(true);
      expect(r.received.equals(Buffer.alloc(size, 0x33))).toBe(true);
    });
  }
});
