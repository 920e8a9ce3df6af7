/**
 * The object sink of the MPA framer (mpa-direction.ts): what the framer finds in a direction
 * becomes `CaptureItem`s, typed objects with each FPDU's RDMAP message decoded. Both eager
 * capture decoders use it: the whole-capture one (decode-capture.ts) and the streaming one
 * (stream-decode.ts). The lazy decoder has the other sink, views (lazy-decode.ts).
 */
import type { DecodeError } from '../errors.js';
import type { IwarpProfile } from '../iwarp/profiles.js';
import { decodeRdmapMessage } from '../iwarp/rdmap.js';
import type { CaptureItem, ItemOrigin } from './decode-capture.js';
import type { MpaDirection, MpaSink } from './mpa-direction.js';

/** Which way a direction's bytes go. */
export type CaptureDirection = 'client-to-server' | 'server-to-client';

/** What the object sink needs from its decoder, for directions `D`. */
export interface ObjectSinkHost<D> {
  /** RDMAP profile for the ULPDUs (default: the codec's). */
  readonly profile: IwarpProfile | undefined;
  /** The index of `d`'s connection among the iWARP connections. */
  connection(d: D): number;
  direction(d: D): CaptureDirection;
  /** Takes an item the framer completed. */
  emit(item: CaptureItem): void;
  /** The direction turned out not to start with an MPA frame. */
  notMpa(d: D): void;
  /**
   * Whether a direction's pending bytes stay as they are once framed (a whole direction
   * adopted before framing began): the items then keep views of them, not copies.
   */
  readonly stableBytes?: boolean;
}

/** An MpaSink that makes `CaptureItem`s (see the module comment). */
export function objectSink<D extends MpaDirection<ItemOrigin>>(
  host: ObjectSinkHost<D>,
): MpaSink<ItemOrigin, D> {
  const rdmapOptions = host.profile === undefined ? {} : { profile: host.profile };
  const problem = (d: D, from: ItemOrigin, error: DecodeError) =>
    host.emit({
      kind: 'problem',
      frameIndex: from.frameIndex,
      timestampNs: from.timestampNs,
      error,
      connection: host.connection(d),
      direction: host.direction(d),
    });
  const sink: MpaSink<ItemOrigin, D> = {
    notMpa: (d) => host.notMpa(d),
    opened: (d) => {
      host.connection(d);
    },
    mpaFrame: (d, frame, at) =>
      host.emit({
        kind: 'mpa-frame',
        frameIndex: at.frameIndex,
        timestampNs: at.timestampNs,
        connection: host.connection(d),
        direction: host.direction(d),
        frame,
      }),
    problem,
    fpdus: (d) => {
      const connection = host.connection(d);
      const direction = host.direction(d);
      for (;;) {
        const r = d.nextFpdu(sink);
        if (r === undefined) return;
        const at = d.frameAt(d.consumed);
        const base = d.consumed;
        // Copies of what stays referenced: a streaming buffer is reused once consumed.
        const ulpdu = host.stableBytes ? r.fpdu.ulpdu : r.fpdu.ulpdu.slice();
        const fpdu = {
          ...r,
          fpdu: host.stableBytes ? r.fpdu : { ...r.fpdu, ulpdu, pad: r.fpdu.pad.slice() },
          offset: base,
          markers: r.markers.map((m) => ({ ...m, offset: m.offset + base })),
          sequence: d.sequenceAt(base),
          message: decodeRdmapMessage(ulpdu, rdmapOptions),
        };
        d.consume(r.length);
        host.emit({
          kind: 'fpdu',
          frameIndex: at.frameIndex,
          timestampNs: at.timestampNs,
          connection,
          direction,
          fpdu,
        });
      }
    },
  };
  return sink;
}
