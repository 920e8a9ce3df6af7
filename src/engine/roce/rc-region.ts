/**
 * The RC responder's semantics over one memory region (./rc-semantics.ts), for the packet
 * tester: the region is registered in the engine's shared tagged-buffer table, whose
 * check decides R_Key, access and bounds (IBTA Vol. 1 §9.7.5.2.8: NAK Remote Access
 * Error), and the atomics run through execute-atomic over the RFC 7306 arithmetic (the
 * one FetchAdd and CmpSwap). Receives are counted by length, in order.
 */

import type { AtomicEth, Reth } from '../../codec/roce/headers.js';
import { type AccessFlag, accessMask } from '../../ibverbs/access-flags.js';
import { U64_MASK } from '../atomic/masked-arith.js';
import { type TaggedBuffer, TaggedBufferTable } from '../memory/tagged-buffer.js';
import { executeAtomic } from '../responder/execute-atomic.js';
import type { RcRefusal, RcSemantics, RoceReceiveCompletion } from './rc-semantics.js';

/** The one memory region the tester targets. */
export interface RoceRegion {
  readonly virtualAddress: bigint;
  readonly rKey: number;
  /** The region's bytes (copied: the model keeps its own mirror). */
  readonly contents: Uint8Array;
}

/**
 * The region in the shared table: its R_Key as the STag, its virtual address as the base
 * (a VA-based MR), every remote right (the tester's MR grants them all), memory in the
 * byte order of the little-endian hosts rxe runs on.
 */
const REGION_ACCESS = accessMask(['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC']);
/** The same with the FLUSH right of IBTA 1.5 Annex A19 (placement type global visibility). */
const REGION_ACCESS_FLUSH = REGION_ACCESS | accessMask(['FLUSH_GLOBAL']);
const REGION_PD = 1;
const STREAM = { streamId: 1, protectionDomain: REGION_PD } as const;

const REMOTE_ACCESS: RcRefusal = {
  rule: 'remote-access',
  answer: 'nak',
  code: 'REMOTE_ACCESS_ERROR',
};

function invalidRequest(rule: string): RcRefusal {
  return { rule, answer: 'nak', code: 'INVALID_REQUEST' };
}

/**
 * A request the responder QP's remote access enables (`qp_access_flags`) do not allow:
 * an operation this QP does not support, NAK Invalid Request, checked before the R_Key
 * (IBTA 1.5 Vol. 1 §10.6.3.3; rxe_resp.c check_op_valid -> RESPST_ERR_UNSUPPORTED_OPCODE),
 * not the region's Remote Access Error (failure-table.ts `qp-access-disabled`).
 */
const QP_ACCESS = invalidRequest('qp-access-disabled');

/** One region and a receive queue (see the file comment). */
export class RoceRegionSemantics implements RcSemantics {
  readonly #buffers = new TaggedBufferTable();
  readonly #region: TaggedBuffer;
  readonly #receives: number[];
  readonly #atomicWrite: boolean;
  readonly #qpAccess: number;
  readonly #flush: boolean;
  /** Where the Write in progress starts, as an offset into the region. */
  #writeStart = 0;

  /**
   * `qpAccess`: the QP's remote access enables (default every one); `flush`: the region and
   * the QP grant FLUSH_GLOBAL (an rxe from 6.2 registered so), else FLUSH is unsupported.
   */
  constructor(
    region: RoceRegion,
    receives: readonly number[],
    atomicWrite: boolean,
    qpAccess: readonly AccessFlag[] = ['REMOTE_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC'],
    flush = false,
  ) {
    // register() copies `contents` (it may be a Buffer, whose slice() is a view).
    this.#region = this.#buffers.register({
      stag: region.rKey,
      baseTaggedOffset: region.virtualAddress,
      length: region.contents.length,
      access: flush ? REGION_ACCESS_FLUSH : REGION_ACCESS,
      protectionDomain: REGION_PD,
      contents: region.contents,
    });
    this.#receives = [...receives];
    this.#atomicWrite = atomicWrite;
    this.#qpAccess = accessMask(qpAccess);
    this.#flush = flush;
  }

  #qpDenies(right: AccessFlag): boolean {
    return (this.#qpAccess & accessMask([right])) === 0;
  }

  get memory(): Uint8Array {
    return this.#region.memory.slice();
  }

  /** Posts a receive buffer of `length` bytes. */
  postReceive(length: number): void {
    this.#receives.push(length);
  }

  /** R_Key, access and bounds: the shared tagged-buffer check; the MR offset or undefined. */
  #target(va: bigint, rKey: number, length: number, right: AccessFlag): number | undefined {
    const checked = this.#buffers.check(STREAM, rKey, va, length, right);
    return checked.ok ? checked.access.offset : undefined;
  }

  receiveReady(): boolean {
    return this.#receives.length > 0;
  }

  writeTarget(reth: Reth): RcRefusal | undefined {
    if (this.#qpDenies('REMOTE_WRITE')) return QP_ACCESS;
    const start = this.#target(reth.virtualAddress, reth.rKey, reth.dmaLength, 'REMOTE_WRITE');
    if (start === undefined) return REMOTE_ACCESS;
    this.#writeStart = start;
    return undefined;
  }

  placeWrite(at: number, payload: Uint8Array): void {
    this.#region.memory.set(payload, this.#writeStart + at);
  }

  sendRefusal(): RcRefusal | undefined {
    return undefined;
  }

  consumeReceive(completion: RoceReceiveCompletion): RoceReceiveCompletion {
    this.#receives.shift();
    return completion;
  }

  read(reth: Reth): { readonly data: Uint8Array } | RcRefusal {
    if (this.#qpDenies('REMOTE_READ')) return QP_ACCESS;
    const offset = this.#target(reth.virtualAddress, reth.rKey, reth.dmaLength, 'REMOTE_READ');
    if (offset === undefined) return REMOTE_ACCESS;
    return { data: this.#region.memory.subarray(offset, offset + reth.dmaLength) };
  }

  atomic(
    kind: 'fetch-add' | 'cmp-swap',
    eth: AtomicEth,
  ): { readonly original: bigint } | RcRefusal {
    if (this.#qpDenies('REMOTE_ATOMIC')) return QP_ACCESS;
    // o9-21: an Atomic's address is 8-byte aligned; checked before the R_Key.
    if (eth.virtualAddress % 8n !== 0n) return invalidRequest('atomic-misaligned');
    const offset = this.#target(eth.virtualAddress, eth.rKey, 8, 'REMOTE_ATOMIC');
    if (offset === undefined) return REMOTE_ACCESS;
    // §9.4.5: FETCH ADD adds the whole word (RFC 7306 §5.1.1 with Add Mask 0), COMPARE SWAP
    // compares and swaps the whole word (§5.1.2 with all-ones masks): the shared atomics.
    const { original } = executeAtomic(
      kind,
      { buffer: this.#region, offset, address: eth.virtualAddress },
      {
        addOrSwapData: eth.swapOrAddData,
        addOrSwapMask: kind === 'fetch-add' ? 0n : U64_MASK,
        compareData: eth.compareData,
        compareMask: U64_MASK,
      },
    );
    return { original };
  }

  atomicWriteSupported(): boolean {
    return this.#atomicWrite;
  }

  atomicWrite(reth: Reth, payload: Uint8Array): RcRefusal | undefined {
    if (this.#qpDenies('REMOTE_WRITE')) return QP_ACCESS;
    // oA19-28: exactly 8 bytes; o9-21: 8-byte aligned.
    if (reth.dmaLength !== 8 || payload.length !== 8) return invalidRequest('atomic-write-length');
    if (reth.virtualAddress % 8n !== 0n) return invalidRequest('atomic-misaligned');
    const offset = this.#target(reth.virtualAddress, reth.rKey, 8, 'REMOTE_WRITE');
    if (offset === undefined) return REMOTE_ACCESS;
    this.#region.memory.set(payload, offset);
    return undefined;
  }

  /**
   * FLUSH (IBTA 1.5 Annex A19) with selectivity "memory range" and placement type global
   * visibility, the form the tester sends: without the FLUSH right on the QP it is an
   * unsupported operation (rxe_resp.c check_op_valid: NAK Invalid Request); else the R_Key,
   * the region's FLUSH_GLOBAL right and the range are checked as for any access (rxe_resp.c
   * check_rkey), and nothing in memory changes.
   */
  flush(reth: Reth): RcRefusal | undefined {
    if (!this.#flush) return invalidRequest('unsupported-opcode');
    const at = this.#target(reth.virtualAddress, reth.rKey, reth.dmaLength, 'FLUSH_GLOBAL');
    return at === undefined ? REMOTE_ACCESS : undefined;
  }
}
