/**
 * The address exchange of rdma-core's pingpong examples (libibverbs/examples
 * rc_pingpong.c, srq_pingpong.c, ud_pingpong.c: pp_client_exch_dest / pp_server_exch_dest)
 * over TCP, so that a program written with the wrapper can face them. Each side sends one
 * fixed-size message `"%04x:%06x:%06x:%s"` (LID, QPN, PSN, the GID as 32 hex digits, each
 * 32-bit word big-endian as gid_to_wire_gid writes it in pingpong.c) with its NUL: 52
 * bytes (`sizeof "0000:000000:000000:" + 32`). The client sends first, reads the server's,
 * then writes `"done"` with its NUL; the server reads, connects its QP, answers, reads
 * `"done"`. srq_pingpong sends one message per QP, in QP order.
 */
import { once } from 'node:events';
import { createConnection, createServer, type Socket } from 'node:net';

/** One side's address, as the examples print and exchange it. */
export interface PingPongDest {
  readonly lid: number;
  readonly qpn: number;
  readonly psn: number;
  /** The 16 GID bytes. */
  readonly gid: Buffer;
}

/** The size of one address message, NUL included (rc_pingpong.c `char msg[...]`). */
export const DEST_MESSAGE_BYTES = 52;
const DONE = Buffer.from('done\0');

/** An address as the 52-byte message (`sprintf("%04x:%06x:%06x:%s")` plus its NUL). */
export function encodeDest(d: PingPongDest): Buffer {
  if (d.gid.length !== 16) throw new RangeError('a GID has 16 bytes');
  const hex = (v: number, width: number) => v.toString(16).padStart(width, '0');
  // gid_to_wire_gid: each 4-byte word printed as "%08x" of its big-endian value: the
  // bytes in order.
  const text = `${hex(d.lid, 4)}:${hex(d.qpn, 6)}:${hex(d.psn, 6)}:${d.gid.toString('hex')}`;
  const out = Buffer.alloc(DEST_MESSAGE_BYTES);
  out.write(text, 'latin1');
  return out;
}

/** The address in a 52-byte message (`sscanf("%x:%x:%x:%s")`, wire_gid_to_gid). */
export function decodeDest(msg: Buffer): PingPongDest {
  const end = msg.indexOf(0);
  const text = msg.subarray(0, end < 0 ? msg.length : end).toString('latin1');
  const m = /^([0-9a-f]+):([0-9a-f]+):([0-9a-f]+):([0-9a-f]{32})$/i.exec(text);
  if (m === null) throw new Error(`not a pingpong address message: ${JSON.stringify(text)}`);
  const [, lid, qpn, psn, gid] = m as unknown as [string, string, string, string, string];
  return {
    lid: Number.parseInt(lid, 16),
    qpn: Number.parseInt(qpn, 16),
    psn: Number.parseInt(psn, 16),
    gid: Buffer.from(gid, 'hex'),
  };
}

/** Reads exactly `n` bytes from `socket` (the examples' `read` of a whole message). */
async function readExactly(socket: Socket, n: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let have = 0;
  for (;;) {
    const chunk = socket.read(
      Math.min(n - have, socket.readableLength || n - have),
    ) as Buffer | null;
    if (chunk !== null) {
      chunks.push(chunk);
      have += chunk.length;
      if (have === n) return Buffer.concat(chunks);
      continue;
    }
    if (socket.readableEnded || socket.destroyed)
      throw new Error(`the peer closed the exchange after ${have} of ${n} bytes`);
    await Promise.race([once(socket, 'readable'), once(socket, 'end')]);
  }
}

/**
 * Connects, retrying while the server is not listening yet (a C server started just
 * before takes a while under emulation): up to `limitMs`.
 */
async function connectWithRetry(host: string, port: number, limitMs = 20_000): Promise<Socket> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const socket = createConnection({ host, port });
    try {
      await once(socket, 'connect');
      return socket;
    } catch (e) {
      socket.destroy();
      const code = (e as { code?: string }).code;
      if (code !== 'ECONNREFUSED' || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * The client's exchange: sends `mine` (one message per QP), reads as many of the
 * server's, writes "done". `connected` sees the server's addresses before "done" goes.
 */
export async function clientExchange(
  host: string,
  port: number,
  mine: readonly PingPongDest[],
): Promise<PingPongDest[]> {
  const socket = await connectWithRetry(host, port);
  try {
    for (const d of mine) socket.write(encodeDest(d));
    const theirs: PingPongDest[] = [];
    for (let i = 0; i < mine.length; i++)
      theirs.push(decodeDest(await readExactly(socket, DEST_MESSAGE_BYTES)));
    socket.write(DONE);
    socket.end();
    await once(socket, 'finish');
    return theirs;
  } finally {
    socket.destroy();
  }
}

/** A listening server side of the exchange (listen first, then start the C client). */
export interface ExchangeServer {
  readonly port: number;
  /**
   * Accepts one client, reads its `count` addresses, lets `connect` bring the QPs to RTS
   * against them (the examples connect before they answer), answers with `mine(theirs)`
   * and reads "done".
   */
  accept(
    count: number,
    connect: (theirs: PingPongDest[]) => readonly PingPongDest[],
  ): Promise<PingPongDest[]>;
  close(): void;
}

export async function listenExchange(port: number, host = '0.0.0.0'): Promise<ExchangeServer> {
  const server = createServer({ pauseOnConnect: false });
  const sockets: Socket[] = [];
  server.on('connection', (s) => sockets.push(s));
  server.listen(port, host);
  await once(server, 'listening');
  const address = server.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;
  return {
    port: bound,
    async accept(count, connect) {
      const socket = sockets.shift() ?? ((await once(server, 'connection')) as [Socket])[0];
      sockets.length = 0;
      try {
        const theirs: PingPongDest[] = [];
        for (let i = 0; i < count; i++)
          theirs.push(decodeDest(await readExactly(socket, DEST_MESSAGE_BYTES)));
        for (const d of connect(theirs)) socket.write(encodeDest(d));
        const done = await readExactly(socket, DONE.length);
        if (!done.equals(DONE)) throw new Error('the client did not write "done"');
        return theirs;
      } finally {
        socket.destroy();
      }
    },
    close: () => {
      server.close();
    },
  };
}
