/**
 * Work requests as RoCEv2 packets (IBTA Vol. 1 §9, BTH opcodes from the RoCE codec's
 * table): RETH for RDMA, AtomicETH for atomics, ImmDt for immediates. RC service.
 * Messages longer than the path MTU are split into FIRST / MIDDLE / LAST packets (§9.4);
 * an RDMA Read Request consumes one PSN per expected response packet (§9.7.1).
 */
import type { ExtensionHeaders } from '../../codec/roce/headers.js';
import { BthOpcode, type BthOpcodeName } from '../../codec/roce/opcodes.js';
import type { RocePacketFields } from '../../codec/roce/packet.js';
import { FLUSH_PLACEMENT, FLUSH_SELECTIVITY } from '../../ibverbs/flush.js';
import type { WorkRequest, WorkRequestError } from './work-request.js';
import { validateWorkRequest } from './work-request.js';

/** Where the requester's packets go and the PSN it is at. */
export interface RoceSendState {
  readonly destinationQp: number;
  /** Next PSN (24 bits). */
  psn: number;
  /** Path MTU in bytes (256..4096). */
  readonly mtu: number;
}

/** Result of turning one work request into packets. */
export type RoceEncoding =
  | { readonly ok: true; readonly packets: readonly RocePacketFields[] }
  | { readonly ok: false; readonly error: WorkRequestError };

const PSN_MASK = 0xff_ffff;

/** The RoCEv2 packets of `wr`; advances `state.psn` only on success. */
export function workRequestToRoce(wr: WorkRequest, state: RoceSendState): RoceEncoding {
  const invalid = validateWorkRequest(wr);
  if (invalid !== undefined) return { ok: false, error: invalid };
  const packets: RocePacketFields[] = [];
  let psn = state.psn;
  // IBTA 9.2.3: SE is set in the last (or only) packet of a solicited Send / Write with
  // Immediate.
  const push = (
    name: BthOpcodeName,
    headers: ExtensionHeaders,
    payload?: Uint8Array,
    solicitedEvent = false,
  ) => {
    packets.push({
      bth: {
        opcode: BthOpcode[name],
        destinationQp: state.destinationQp,
        psn,
        ...(solicitedEvent ? { solicitedEvent } : {}),
      },
      headers,
      ...(payload === undefined ? {} : { payload }),
    });
    psn = (psn + 1) & PSN_MASK;
  };
  switch (wr.opcode) {
    case 'ATOMIC_WRITE': {
      // IBTA 1.5 Annex A19 (not RFC 7306): one packet, RETH with DMA Length 8, the 8 bytes
      // as payload, in the order the requester's buffer holds them (little-endian here).
      const payload = new Uint8Array(8);
      new DataView(payload.buffer).setBigUint64(0, wr.atomicValue, true);
      push(
        'RC_ATOMIC_WRITE',
        { RETH: { virtualAddress: wr.remoteAddr, rKey: wr.rkey, dmaLength: 8 } },
        payload,
      );
      break;
    }
    case 'FLUSH':
      // IBTA 1.5 Annex A19: FETH (placement type in bits 3-0, selectivity level in bits
      // 5-4, as rxe_hdr.h lays it out) then RETH; no payload. The responder answers with
      // an RDMA READ Response Only of no data (rxe_comp.c accepts that for IB_WR_FLUSH).
      push('RC_FLUSH', {
        FETH: {
          value:
            (FLUSH_SELECTIVITY[wr.flush.selectivity ?? 'RANGE'] << 4) |
            FLUSH_PLACEMENT[wr.flush.placement ?? 'GLOBAL'],
        },
        RETH: {
          virtualAddress: wr.remoteAddr,
          rKey: wr.rkey,
          dmaLength: Number(wr.flush.length),
        },
      });
      break;
    case 'ATOMIC_FETCH_AND_ADD':
      // IBTA §9.3.4: AtomicETH carries VA, R_Key, Add Data (in SwapOrAdd), Compare unused.
      push('RC_FETCH_ADD', {
        AtomicETH: {
          virtualAddress: wr.remoteAddr,
          rKey: wr.rkey,
          swapOrAddData: wr.add,
          compareData: 0n,
        },
      });
      break;
    case 'ATOMIC_CMP_AND_SWP':
      push('RC_COMPARE_SWAP', {
        AtomicETH: {
          virtualAddress: wr.remoteAddr,
          rKey: wr.rkey,
          swapOrAddData: wr.swap,
          compareData: wr.compare,
        },
      });
      break;
    case 'RDMA_READ':
      push('RC_RDMA_READ_REQUEST', {
        RETH: { virtualAddress: wr.remoteAddr, rKey: wr.rkey, dmaLength: wr.length },
      });
      // §9.7.1: the responder uses one PSN per response packet.
      psn = (psn + Math.max(1, Math.ceil(wr.length / state.mtu)) - 1) & PSN_MASK;
      break;
    case 'RDMA_WRITE':
    case 'RDMA_WRITE_WITH_IMM':
    case 'SEND':
    case 'SEND_WITH_IMM':
    case 'SEND_WITH_INV': {
      const write = wr.opcode.startsWith('RDMA_WRITE');
      const withImm = wr.opcode.endsWith('_WITH_IMM');
      // IBTA 1.5 §9.3.8: the last (or only) packet of a Send with Invalidate carries the
      // R_Key to invalidate in its IETH.
      const ieth = 'invalidateRkey' in wr ? { rKey: wr.invalidateRkey } : undefined;
      const reth =
        'remoteAddr' in wr
          ? { virtualAddress: wr.remoteAddr, rKey: wr.rkey, dmaLength: wr.payload.length }
          : undefined;
      // ImmDt holds the 32-bit immediate as its big-endian wire value (IBTA §9.3.7).
      const imm = withImm && 'immData' in wr ? { immediateData: wr.immData ?? 0 } : undefined;
      const chunks: Uint8Array[] = [];
      for (let at = 0; at < wr.payload.length; at += state.mtu)
        chunks.push(wr.payload.subarray(at, at + state.mtu));
      if (chunks.length === 0) chunks.push(new Uint8Array(0));
      const op = write ? 'RDMA_WRITE' : 'SEND';
      const immSuffix = withImm ? '_WITH_IMMEDIATE' : ieth !== undefined ? '_WITH_INVALIDATE' : '';
      const se = wr.solicited === true && (!write || withImm);
      if (chunks.length === 1) {
        push(
          `RC_${op}_ONLY${immSuffix}` as BthOpcodeName,
          headersOf(reth, imm, ieth),
          chunks[0],
          se,
        );
      } else {
        chunks.forEach((chunk, i) => {
          if (i === 0) push(`RC_${op}_FIRST` as BthOpcodeName, headersOf(reth, undefined), chunk);
          else if (i < chunks.length - 1) push(`RC_${op}_MIDDLE` as BthOpcodeName, {}, chunk);
          else
            push(
              `RC_${op}_LAST${immSuffix}` as BthOpcodeName,
              headersOf(undefined, imm, ieth),
              chunk,
              se,
            );
        });
      }
      break;
    }
    default:
      return unknownOpcode(wr);
  }
  state.psn = psn;
  return { ok: true, packets };
}

/** A work request no case above handles: a compile error (`wr` is never) before a runtime one. */
function unknownOpcode(wr: never): never {
  // Unreachable: work requests are checked against REQUIRED_FIELDS (one row per opcode) first.
  throw new Error(
    `to-roce: no RoCE packets for opcode ${String((wr as { opcode?: unknown }).opcode)}`,
  );
}

function headersOf(
  reth: { virtualAddress: bigint; rKey: number; dmaLength: number } | undefined,
  imm: { immediateData: number } | undefined,
  ieth?: { rKey: number },
): ExtensionHeaders {
  return {
    ...(reth === undefined ? {} : { RETH: reth }),
    ...(imm === undefined ? {} : { ImmDt: imm }),
    ...(ieth === undefined ? {} : { IETH: ieth }),
  };
}
