/**
 * What the reference engine, as an RNIC without RFC 7306 (siw's capabilities), answers
 * to a probe: RFC 7306 §1.1 (a peer without the extension answers with a Terminate,
 * Remote Operation Error / Unexpected OpCode).
 */
import type { RdmapMessage } from '../codec/iwarp/messages.js';
import { encodeRdmapMessage } from '../codec/iwarp/rdmap.js';
import { TaggedBufferTable } from '../engine/memory/tagged-buffer.js';
import { Responder } from '../engine/responder/responder.js';

export interface EngineAnswer {
  /** Messages the engine sends back. */
  readonly sent: readonly RdmapMessage[];
  /** Bytes delivered into the posted receive buffer, if a Send completed. */
  readonly delivered: Uint8Array | undefined;
}

/** The engine as siw: no atomics, no immediate data, one 64-byte receive posted. */
export function engineAnswer(message: RdmapMessage): EngineAnswer {
  const responder = new Responder({
    stream: { streamId: 1, protectionDomain: 1 },
    buffers: new TaggedBufferTable(),
    ird: 4,
    supportsAtomics: false,
    supportsImmediateData: false,
  });
  responder.postReceive({ id: 1n, length: 64 });
  const result = responder.receive(message, encodeRdmapMessage(message));
  return { sent: result.sent, delivered: result.completions[0]?.data };
}
