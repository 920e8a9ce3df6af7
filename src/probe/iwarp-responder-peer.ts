/**
 * The tester as Responder, siw as Requester: our userspace iWARP peer listens on TCP,
 * a siw0 QP connects to it through rdma_cm (siw sends the MPA Request, we reply), a verbs
 * program posts an RDMA Read on siw, and the tester answers the Read Request it receives
 * with what the reference engine, holding no buffer under that STag, answers: a Terminate
 * (RFC 5040 §4.8, Remote Protection Error / Invalid STag). What siw's work request
 * completes with is then compared with what the engine projects for that Terminate.
 */
import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import type { MpaNegotiated, RdmapMessage, Terminate } from '../codec/iwarp/messages.js';
import { decodeMpaFrame, encodeMpaFrame, makeMpaFrame } from '../codec/iwarp/mpa-frames.js';
import { decodeMpaStream, negotiateMpa } from '../codec/iwarp/stream.js';
import { TaggedBufferTable } from '../engine/memory/tagged-buffer.js';
import { terminateStatus } from '../engine/projection/terminate-status.js';
import { Responder } from '../engine/responder/responder.js';
import { answerLine } from '../judge/iwarp-answer.js';
import { EventChannel } from '../verbs/cm.js';
import type { Assertion } from './assertion.js';
import { concatBytes, fpduOf, segmentWith } from './iwarp-packets.js';
import { PEER_ENHANCED_PARAMETERS, SIW_ADDRESS, waitUntil } from './siw-peer.js';

/** An assertion where the tester is the Responder and a verbs program on siw posts. */
export interface IwarpResponderAssertion extends Assertion {
  readonly provider: 'siw';
  readonly testerRole: 'responder';
  /** What siw posts: an RDMA Read of 8 bytes from the tester's (unregistered) STag. */
  readonly post: 'rdma-read';
}

export const IWARP_RESPONDER_ASSERTIONS: readonly IwarpResponderAssertion[] = [
  {
    id: 'siw-requester-terminate-on-read',
    spec: 'RFC 5040 §4.8, §7 (a Terminate ends the stream; the Requester reports the error)',
    provider: 'siw',
    testerRole: 'responder',
    title: "siw's RDMA Read answered by the tester with a Terminate (Invalid STag)",
    hostile: true,
    post: 'rdma-read',
  },
];

/** What each side shows: the request siw sent, our answer, siw's completion. */
export interface RequesterObservation {
  readonly request: readonly string[];
  readonly answer: readonly string[];
  readonly status: string;
}

const REMOTE_STAG = 0x4d3c2b1a;
const REMOTE_OFFSET = 0x0123456789abcde8n;

/**
 * Runs one assertion; resolves with siw's side (observed), the engine's (expected) and
 * the status siw's reporting model (terminate-status.ts `siw`) gives for the same
 * Terminate (the recorded `siw-terminate-flushes-requester`).
 */
export async function runResponderAssertion(_assertion: IwarpResponderAssertion): Promise<{
  observed: RequesterObservation;
  expected: RequesterObservation;
  siwModelStatus: string;
}> {
  const server = createServer();
  server.listen(0, SIW_ADDRESS);
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const accepted = once(server, 'connection') as Promise<[Socket]>;
  const channel = new EventChannel();
  const id = channel.createId();
  const cleanup: (() => void | Promise<void>)[] = [
    () => server.close(),
    () => channel.close(),
    () => id.close(),
  ];
  try {
    await id.resolveAddr(SIW_ADDRESS, port, { src: SIW_ADDRESS });
    await id.resolveRoute();
    const pd = id.context().allocPd();
    cleanup.push(() => pd.close());
    const cq = id.context().createCq({ cqe: 8 });
    cleanup.push(() => cq.close());
    const qp = id.createQp(pd, { sendCq: cq });
    const sink = pd.allocMr(8, ['LOCAL_WRITE']);
    cleanup.push(() => sink.close());
    cleanup.push(() => qp.close());
    const connecting = id.connect({ initiatorDepth: 4, responderResources: 4 });
    const [socket] = await accepted;
    cleanup.push(() => {
      socket.destroy();
    });
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {});
    const bytes = () => new Uint8Array(Buffer.concat(chunks));
    let request: ReturnType<typeof decodeMpaFrame> | undefined;
    await waitUntil(() => {
      request = decodeMpaFrame(bytes());
      return request.ok;
    }, 10_000);
    if (request === undefined || !request.ok) throw new Error('siw sent no MPA Request');
    const requestFrame = request.value.frame;
    // Answer in the revision siw asked with; no CRC, no markers, no RTR (siw's defaults).
    const reply = makeMpaFrame('mpa-reply', {
      revision: requestFrame.revision,
      ...(requestFrame.enhancedParameters === undefined
        ? {}
        : {
            enhancedParameters: PEER_ENHANCED_PARAMETERS,
          }),
    });
    const frameBytes = request.value.length;
    socket.write(encodeMpaFrame(reply));
    await connecting;
    const negotiated: MpaNegotiated = negotiateMpa(reply, requestFrame);

    qp.postSend({
      opcode: 'RDMA_READ',
      sgList: [sink.sge(0, 8)],
      remote: { addr: REMOTE_OFFSET, rkey: REMOTE_STAG },
    });
    // The Read Request: the first whole FPDU after siw's MPA Request.
    let sent: RdmapMessage[] = [];
    await waitUntil(() => {
      const stream = decodeMpaStream(bytes().subarray(frameBytes), { negotiated });
      if (stream.ok)
        sent = stream.value.fpdus.flatMap((f) => (f.message.ok ? [f.message.value] : []));
      return sent.length > 0;
    }, 10_000);
    const readRequest = sent[0];
    if (readRequest === undefined) throw new Error('siw sent no Read Request');
    // The engine as this Responder: no buffer registered, so the Read Request fails.
    const engine = new Responder({
      stream: { streamId: 1, protectionDomain: 1 },
      buffers: new TaggedBufferTable(),
      ird: 4,
      supportsAtomics: false,
      supportsImmediateData: false,
    });
    const answer = engine.receive(readRequest);
    const terminate = answer.sent.find((m): m is Terminate => m.kind === 'terminate');
    if (terminate === undefined) throw new Error('the engine did not answer with a Terminate');
    socket.write(concatBytes(answer.sent.map((m) => fpduOf(segmentWith(m), negotiated))));
    const completion = await cq.next({ timeoutMs: 10_000 }).catch(() => undefined);
    const request_ = sent.map(answerLine);
    const answerLines = answer.sent.map(answerLine);
    return {
      observed: {
        request: request_,
        answer: answerLines,
        status: completion === undefined ? 'no completion' : completion.status,
      },
      expected: {
        request: request_,
        answer: answerLines,
        status: terminateStatus(terminate, 'reference'),
      },
      siwModelStatus: terminateStatus(terminate, 'siw'),
    };
  } finally {
    for (const step of cleanup.reverse()) {
      try {
        await step();
      } catch {
        // Best effort: the first error is the one worth reporting.
      }
    }
  }
}
