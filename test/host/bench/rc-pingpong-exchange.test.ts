import { describe, expect, it } from 'vitest';
import {
  clientExchange,
  DEST_MESSAGE_BYTES,
  decodeDest,
  encodeDest,
  listenExchange,
  type PingPongDest,
} from '../../../src/bench/rc-pingpong/exchange.js';

// The GID of rxe0 in the guest: ::ffff:192.0.2.1.
const GID = Buffer.from('00000000000000000000ffffc0000201', 'hex');
const mine: PingPongDest = { lid: 0x12, qpn: 0x1a2b3c, psn: 0xabcdef, gid: GID };

describe("rdma-core pingpong examples' address exchange", () => {
  it('encodes as rc_pingpong.c sprintf("%04x:%06x:%06x:%s") + gid_to_wire_gid, NUL-padded to 52 bytes', () => {
    const msg = encodeDest(mine);
    expect(msg.length).toBe(DEST_MESSAGE_BYTES);
    expect(msg.subarray(0, 51).toString('latin1')).toBe(
      '0012:1a2b3c:abcdef:00000000000000000000ffffc0000201',
    );
    expect(msg[51]).toBe(0);
    expect(decodeDest(msg)).toEqual(mine);
  });

  it('refuses a message that is not an address, and a GID that is not 16 bytes', () => {
    expect(() => decodeDest(Buffer.from('done\0'))).toThrow(/not a pingpong address/);
    expect(() => encodeDest({ ...mine, gid: Buffer.alloc(4) })).toThrow(/16 bytes/);
  });

  it('client and server trade addresses over TCP, the server connecting before it answers', async () => {
    const server = await listenExchange(0, '127.0.0.1');
    const theirs: PingPongDest = { lid: 0, qpn: 0x000011, psn: 0x765432, gid: GID };
    const order: string[] = [];
    const accepted = server.accept(1, (got) => {
      order.push(`connect to ${got[0]?.qpn}`);
      return [theirs];
    });
    const got = await clientExchange('127.0.0.1', server.port, [mine]);
    expect(await accepted).toEqual([mine]);
    expect(got).toEqual([theirs]);
    expect(order).toEqual([`connect to ${mine.qpn}`]);
    server.close();
  });
});
