/**
 * What the lazy header views (iwarp/lazy.ts RdmapView, roce/lazy.ts RoceView) share: a
 * window over bytes that is re-pointed frame after frame instead of allocated per frame
 * (issue 13: per-frame allocation was the decoder's main cost).
 */
export class ByteView {
  bytes: Uint8Array = new Uint8Array(0);
  /** Where the viewed header starts in `bytes`. */
  offset = 0;
  /** How many bytes from `offset` belong to it. */
  length = 0;

  /** Points the view at `bytes[offset, offset + length)`; returns the view. */
  at(bytes: Uint8Array, offset: number, length: number): this {
    this.bytes = bytes;
    this.offset = offset;
    this.length = length;
    return this;
  }
}
