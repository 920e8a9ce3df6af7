/**
 * The fault relay between the two guests of a link run (runtime/pair.ts). Each guest's
 * QEMU socket netdev sends its frames (one UDP datagram per Ethernet frame) to the relay
 * instead of to the other guest; the relay forwards them through a FaultPipeline per
 * direction. It runs inside the host CLI's own process (node:dgram): the CLI lives exactly
 * as long as the pair, so there is no further process to start, watch and end by pid, and
 * the sockets close on every path with the pair (`close()` in runGuestPair's `finally`).
 * Two guests under TCG send a few thousand frames a second at most, well within one event
 * loop that otherwise only waits for QEMU.
 */
import { createSocket, type Socket } from 'node:dgram';
import { type FaultCounts, FaultPipeline } from './pipeline.js';
import { Prng } from './prng.js';
import type { FaultSpec } from './spec.js';

/** What the relay did on one link, per direction. */
export interface LinkFaultCounts {
  readonly aToB: FaultCounts;
  readonly bToA: FaultCounts;
}

const HOST = '127.0.0.1';

async function bound(): Promise<Socket> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, HOST, () => {
      socket.off('error', reject);
      resolve();
    });
  });
  return socket;
}

export class LinkRelay {
  readonly #sockets: readonly [Socket, Socket];
  readonly #pipelines: readonly [FaultPipeline, FaultPipeline];
  #closed = false;

  private constructor(
    sockets: readonly [Socket, Socket],
    spec: FaultSpec,
    link: number,
    guestPorts: readonly [number, number],
    spareTcpPorts: readonly number[],
  ) {
    this.#sockets = sockets;
    const [facingA, facingB] = sockets;
    const out = (socket: Socket, port: number) => (frame: Uint8Array) =>
      socket.send(frame, port, HOST, () => {
        // A guest that is gone: the frame is lost like any other.
      });
    this.#pipelines = [
      new FaultPipeline(
        spec,
        new Prng(spec.seed, 2 * link),
        out(facingB, guestPorts[1]),
        spareTcpPorts,
      ),
      new FaultPipeline(
        spec,
        new Prng(spec.seed, 2 * link + 1),
        out(facingA, guestPorts[0]),
        spareTcpPorts,
      ),
    ];
    facingA.on('message', (frame) => this.#pipelines[0].push(frame));
    facingB.on('message', (frame) => this.#pipelines[1].push(frame));
    for (const socket of sockets) socket.on('error', () => {});
  }

  /**
   * A relay for link number `link` between guest ports `guestPorts` (A's, B's: where each
   * guest's netdev listens). Guest A must send to `ports[0]`, guest B to `ports[1]`.
   */
  static async open(
    spec: FaultSpec,
    link: number,
    guestPorts: readonly [number, number],
    spareTcpPorts: readonly number[] = [],
  ): Promise<LinkRelay> {
    const a = await bound();
    const b = await bound().catch((error: unknown) => {
      a.close();
      throw error;
    });
    return new LinkRelay([a, b], spec, link, guestPorts, spareTcpPorts);
  }

  /** The relay's ports: where guest A sends, where guest B sends. */
  get ports(): readonly [number, number] {
    return [this.#sockets[0].address().port, this.#sockets[1].address().port];
  }

  counts(): LinkFaultCounts {
    return { aToB: { ...this.#pipelines[0].counts }, bToA: { ...this.#pipelines[1].counts } };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const pipeline of this.#pipelines) pipeline.close();
    await Promise.all(
      this.#sockets.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))),
    );
  }
}
