/**
 * Patched siw against patched siw (both QPs on siw0, rfc7306=1, the patched libsiw):
 * verbs atomics and RDMA Write with Immediate through rdma_cm, each result compared with
 * what the reference engine computes for the same operation (the masked arithmetic of
 * RFC 7306 §5.1 with the verbs masks, and the verbs projection of Immediate Data).
 */
import { maskedCompareSwap, maskedFetchAdd } from '../engine/atomic/masked-arith.js';
import { immediateValue } from '../engine/projection/work-completion.js';
import { EventChannel } from '../verbs/cm.js';

/** One check: what siw did and what the engine says, as printable strings. */
export interface PairCheck {
  readonly id: string;
  readonly kernel: string;
  readonly engine: string;
}

const SIW_ADDRESS = '198.51.100.1';
const ALL_ONES = 0xffff_ffff_ffff_ffffn;

function u64(value: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(value);
  return b;
}

/** Runs the checks on one connected pair of siw0 QPs. */
export async function runSiwPairChecks(): Promise<PairCheck[]> {
  const channel = new EventChannel();
  const listener = channel.createId();
  listener.bindAddr(SIW_ADDRESS, 0);
  listener.listen(4);
  const client = channel.createId();
  await client.resolveAddr(SIW_ADDRESS, listener.localPort, { src: SIW_ADDRESS });
  await client.resolveRoute();
  const ctx = client.context();
  const pd = ctx.allocPd();
  const cq = ctx.createCq({ cqe: 64 });
  const clientQp = client.createQp(pd, { sendCq: cq, maxSendWr: 16, maxRecvWr: 16 });
  const connecting = client.connect({ initiatorDepth: 4, responderResources: 4 });
  const request = await listener.nextConnectRequest({ timeoutMs: 20_000 });
  const server = request.id;
  const serverQp = server.createQp(pd, { sendCq: cq, maxSendWr: 16, maxRecvWr: 16 });
  await Promise.all([connecting, server.accept({ initiatorDepth: 4, responderResources: 4 })]);
  const checks: PairCheck[] = [];
  const target = pd.regMr(u64(0x0123456789abcdefn), ['LOCAL_WRITE', 'REMOTE_ATOMIC']);
  const result = pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']);
  try {
    const atomic = async (
      id: string,
      wr:
        | { opcode: 'ATOMIC_FETCH_AND_ADD'; add: bigint }
        | { opcode: 'ATOMIC_CMP_AND_SWP'; compare: bigint; swap: bigint },
    ): Promise<void> => {
      const before = target.buffer.readBigUInt64LE(0);
      result.buffer.fill(0);
      clientQp.postSend({ ...wr, sgList: [result.sge(0, 8)], remote: target.remote(0) });
      const wc = await cq.next({ timeoutMs: 20_000 });
      const after =
        wr.opcode === 'ATOMIC_FETCH_AND_ADD'
          ? maskedFetchAdd(before, wr.add, 0n)
          : maskedCompareSwap(before, wr.compare, ALL_ONES, wr.swap, ALL_ONES).value;
      const opcode = wr.opcode === 'ATOMIC_FETCH_AND_ADD' ? 'FETCH_ADD' : 'COMP_SWAP';
      checks.push({
        id,
        kernel: `${wc.status} ${wc.opcode} bytes=${wc.byteLen} original=${result.buffer.readBigUInt64LE(0).toString(16)} remote=${target.buffer.readBigUInt64LE(0).toString(16)}`,
        engine: `SUCCESS ${opcode} bytes=8 original=${before.toString(16)} remote=${after.toString(16)}`,
      });
    };
    await atomic('siw-pair-fetch-add', {
      opcode: 'ATOMIC_FETCH_AND_ADD',
      add: 0x1111111122222222n,
    });
    await atomic('siw-pair-cmp-swap-hit', {
      opcode: 'ATOMIC_CMP_AND_SWP',
      compare: 0x12345678abcdf011n,
      swap: 0x0f1e2d3c4b5a6978n,
    });
    await atomic('siw-pair-cmp-swap-miss', {
      opcode: 'ATOMIC_CMP_AND_SWP',
      compare: 0x0123456789abcdefn,
      swap: 0x8877665544332211n,
    });

    // RDMA Write with Immediate: 16 bytes into the server's buffer, the 32-bit immediate
    // completes the server's receive (RFC 7306 §6, the verbs projection of the engine).
    const sink = pd.regMr(Buffer.alloc(16), ['LOCAL_WRITE', 'REMOTE_WRITE']);
    const recv = pd.regMr(Buffer.alloc(16), ['LOCAL_WRITE']);
    const source = pd.regMr(Buffer.from('0123456789abcdef'), ['LOCAL_WRITE']);
    try {
      serverQp.postRecv({ sgList: [recv.sge(0, 16)] });
      clientQp.postSend({
        opcode: 'RDMA_WRITE_WITH_IMM',
        sgList: [source.sge(0, 16)],
        remote: sink.remote(0),
        immData: 0x12345678,
      });
      const completions = [
        await cq.next({ timeoutMs: 20_000 }),
        await cq.next({ timeoutMs: 20_000 }),
      ];
      const receive = completions.find((wc) => wc.opcode === 'RECV_RDMA_WITH_IMM');
      const send = completions.find((wc) => wc.opcode === 'RDMA_WRITE');
      const imm = immediateValue(0x12345678);
      checks.push({
        id: 'siw-pair-write-with-imm',
        kernel: [
          `send=${send?.status} ${send?.opcode}`,
          `recv=${receive?.status} ${receive?.opcode} bytes=${receive?.byteLen} imm=${receive?.immData?.toString(16)} flags=${receive?.flags.join(',')}`,
          `sink=${sink.buffer.toString()}`,
        ].join(' '),
        engine: [
          'send=SUCCESS RDMA_WRITE',
          `recv=SUCCESS RECV_RDMA_WITH_IMM bytes=16 imm=${imm.host.toString(16)} flags=WITH_IMM`,
          'sink=0123456789abcdef',
        ].join(' '),
      });
    } finally {
      sink.close();
      recv.close();
      source.close();
    }
  } finally {
    result.close();
    target.close();
    await Promise.allSettled([client.disconnect(), server.disconnect()]);
    clientQp.close();
    serverQp.close();
    client.close();
    server.close();
    listener.close();
    cq.close();
    pd.close();
    channel.close();
  }
  return checks;
}
