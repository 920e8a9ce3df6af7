/**
 * Shared set-ups for the kernel tests: two RC QPs on rxe0 connected by hand in
 * loopback (RoCE v2, GID of 192.0.2.1), and two cm_ids connected by rdma_cm on a
 * device's address (siw0: 198.51.100.1; rxe0: 192.0.2.1).
 */
import {
  type CmId,
  type Context,
  type Cq,
  connectPairByHand,
  EventChannel,
  type GidEntry,
  openDevice,
  type Pd,
  type Qp,
  type Srq,
  type SrqOptions,
} from '../../../src/verbs/index.js';

/** Two QPs of one rxe device, RTS, facing each other. */
export interface Loopback {
  readonly ctx: Context;
  readonly pd: Pd;
  readonly cq: Cq;
  readonly a: Qp;
  readonly b: Qp;
  readonly gid: GidEntry;
  close(): void;
}

/**
 * rxe0 loopback; `extended` creates the QPs for the ibv_wr_* path (with
 * `memoryWindowOps`: BIND_MW, LOCAL_INV and SEND_WITH_INV too).
 */
export function rxeLoopback(
  options: { extended?: boolean; memoryWindowOps?: boolean } = {},
): Loopback {
  const ctx = openDevice('rxe0');
  const gid = ctx.findGid({ type: 'RoCEv2', ipv4: '192.0.2.1' });
  const pd = ctx.allocPd();
  const cq = ctx.createCq({ cqe: 512 });
  const qpOptions = { sendCq: cq, maxSendWr: 128, maxRecvWr: 128, maxSendSge: 2, maxRecvSge: 2 };
  const extended = {
    extended: options.extended ?? false,
    memoryWindowOps: options.memoryWindowOps ?? false,
  };
  const a = pd.createQp({ ...qpOptions, ...extended });
  const b = pd.createQp({ ...qpOptions, ...extended });
  const psnA = 0x12a5c3;
  const psnB = 0x03c5a1;
  connectPairByHand(a, b, gid, { aPsn: psnA, bPsn: psnB });
  return {
    ctx,
    pd,
    cq,
    a,
    b,
    gid,
    close() {
      a.close();
      b.close();
      cq.close();
      pd.close();
      ctx.close();
    },
  };
}

/** Two connected cm_ids (client and server side) with one QP each. */
export interface CmPair {
  readonly channel: EventChannel;
  readonly listener: CmId;
  readonly client: CmId;
  readonly server: CmId;
  readonly ctx: Context;
  readonly pd: Pd;
  readonly cq: Cq;
  readonly clientQp: Qp;
  readonly serverQp: Qp;
  /** The server QP's SRQ, when asked for. */
  readonly srq: Srq | undefined;
  /** The private data each side received from the other. */
  readonly receivedByServer: Buffer;
  readonly receivedByClient: Buffer;
  /** Disconnects both ends concurrently, then frees everything. */
  close(): Promise<void>;
}

/** How {@link cmPair} creates its QPs. */
export interface CmPairOptions {
  /** Both QPs for the ibv_wr_* API (rxe), asking for `memoryWindowOps` too. */
  readonly extended?: boolean;
  /** The server QP receives through an SRQ of these options. */
  readonly serverSrq?: SrqOptions;
}

/** Connects two cm_ids over `address` (the device's own IPv4 address). */
export async function cmPair(
  address: string,
  privateData = { client: Buffer.from('client-hello'), server: Buffer.from('server-hello') },
  options: CmPairOptions = {},
): Promise<CmPair> {
  const channel = new EventChannel();
  const listener = channel.createId();
  listener.bindAddr(address, 0);
  listener.listen(4);
  const port = listener.localPort;
  const client = channel.createId();
  await client.resolveAddr(address, port, { src: address });
  await client.resolveRoute();
  const ctx = client.context();
  const pd = ctx.allocPd();
  const cq = ctx.createCq({ cqe: 256 });
  const extended = options.extended === true ? { extended: true, memoryWindowOps: true } : {};
  const clientQp = client.createQp(pd, { sendCq: cq, maxSendWr: 64, maxRecvWr: 64, ...extended });
  const srq = options.serverSrq === undefined ? undefined : pd.createSrq(options.serverSrq);
  const connecting = client.connect({
    privateData: privateData.client,
    initiatorDepth: 4,
    responderResources: 4,
  });
  const request = await listener.nextConnectRequest({ timeoutMs: 20_000 });
  const server = request.id;
  const serverQp = server.createQp(pd, {
    sendCq: cq,
    maxSendWr: 64,
    maxRecvWr: 64,
    ...extended,
    ...(srq === undefined ? {} : { srq }),
  });
  const accepted = server.accept({
    privateData: privateData.server,
    initiatorDepth: 4,
    responderResources: 4,
  });
  const [clientEv] = await Promise.all([connecting, accepted]);
  return {
    channel,
    listener,
    client,
    server,
    ctx,
    pd,
    cq,
    clientQp,
    serverQp,
    srq,
    receivedByServer: request.privateData,
    receivedByClient: clientEv.privateData,
    async close() {
      // Both ends at once: one after the other stalls ~100 s on rxe (kernel-runtime.md).
      await Promise.allSettled([client.disconnect(), server.disconnect()]);
      clientQp.close();
      serverQp.close();
      srq?.close();
      client.close();
      server.close();
      listener.close();
      cq.close();
      pd.close();
      channel.close();
    },
  };
}

/** An 8-byte buffer holding `value` as a little-endian (x86 host order) u64. */
export function u64Buffer(value: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(value);
  return b;
}
