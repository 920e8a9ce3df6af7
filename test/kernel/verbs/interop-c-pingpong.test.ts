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
 * siw0 is left out, and with it the whole pingpong family: every one connects by hand
 * (ibv_modify_qp to RTR/RTS after its TCP exchange), and siw moves a QP to RTS only with
 * the socket iw_cm hands it (siw_qp.c siw_qp_nextstate_from_idle: "no socket", -EINVAL; line
 * 647 on 6.1, 651 on 6.12, 619 on 7.3); ibv_ud_pingpong and ibv_uc_pingpong fail earlier,
 * siw creating RC QPs only (siw_verbs.c siw_create_qp: qp_type != IB_QPT_RC -> EOPNOTSUPP,
 * line 320 on 6.1, 334 on 6.12 and 7.3), as does ibv_xsrq_pingpong (XRC). The rdma_cm
 * exchange with rdma-core's `rping` runs on both devices: interop-rping.test.ts.
 * Every case runs twice: the everyday loop (`form: 'everyday'`) and the prepared exchange
 * (`form: 'exchange'`, src/verbs/exchange.ts: one native call per step).
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

/** The wrapper's two forms of the ping-pong, and the port offset each one's cases use. */
const FORMS = [
  ['everyday', 0],
  ['exchange', 30],
] as const;

describe('the wrapper against rdma-core ibv_rc_pingpong on rxe0', () => {
  const gid = roceGidIndex(DEVICE);

  for (const [form, offset] of FORMS)
    for (const [size, mode, base] of [
      [64, 'poll', 22100],
      [8192, 'events', 22101],
    ] as const) {
      const port = base + offset;
      it(`${form}: as the client of the C server (-c), ${size} B, ${mode}: the C server finds its check passing and our bytes come back`, async () => {
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
          form,
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

  for (const [form, offset] of FORMS)
    for (const [size, mode, base] of [
      [4096, 'poll', 22110],
      [64, 'events', 22111],
    ] as const) {
      const port = base + offset;
      it(`${form}: as the server of the C client (-c), ${size} B, ${mode}: the C client's bytes arrive, then ours echoed`, async () => {
        let client: ReturnType<typeof startExample> | undefined;
        const r = await rcPingPong({
          device: DEVICE,
          size,
          iters: ITERS,
          mode,
          form,
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
