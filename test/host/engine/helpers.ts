/** Shared set-up for engine tests: one Responder with one atomic-capable buffer. */

import type { IwarpProfile } from '../../../src/codec/iwarp/profiles.js';
import type { MemoryByteOrder } from '../../../src/engine/memory/byte-order.js';
import { TaggedBufferTable } from '../../../src/engine/memory/tagged-buffer.js';
import { Responder, type ResponderOptions } from '../../../src/engine/responder/responder.js';
import { accessMask } from '../../../src/ibverbs/access-flags.js';

export const STAG = 0x1a2b3c4d;
export const BASE_TO = 0x00007f3a12345000n;
export const STREAM = { streamId: 7, protectionDomain: 3 } as const;
export const ALL_REMOTE = accessMask([
  'LOCAL_WRITE',
  'REMOTE_WRITE',
  'REMOTE_READ',
  'REMOTE_ATOMIC',
]);

/** A Responder whose buffer STAG holds `initial` (8-byte words written in `order`). */
export function setup(
  options: {
    profile?: IwarpProfile;
    order?: MemoryByteOrder;
    access?: number;
    words?: readonly bigint[];
    length?: number;
  } & Partial<ResponderOptions> = {},
) {
  const buffers = new TaggedBufferTable();
  const order = options.order ?? 'little-endian';
  const length = options.length ?? 64;
  const contents = new Uint8Array(length);
  const view = new DataView(contents.buffer);
  for (const [i, w] of (options.words ?? []).entries())
    view.setBigUint64(i * 8, w, order === 'little-endian');
  const buffer = buffers.register({
    stag: STAG,
    baseTaggedOffset: BASE_TO,
    length,
    access: options.access ?? ALL_REMOTE,
    protectionDomain: STREAM.protectionDomain,
    byteOrder: order,
    contents,
  });
  const responder = new Responder({
    ird: 4,
    ...options,
    stream: STREAM,
    buffers,
    ...(options.profile === undefined ? {} : { profile: options.profile }),
  });
  const word = (index: number) =>
    new DataView(buffer.memory.buffer).getBigUint64(index * 8, order === 'little-endian');
  return { buffers, buffer, responder, word };
}
