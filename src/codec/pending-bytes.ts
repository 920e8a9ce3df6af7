/**
 * The bytes a streaming reader holds until it can use them, consumed from the front and
 * appended to at the back: the capture reader's unread file bytes (pcap/record-stream.ts)
 * and a TCP direction's in-order bytes not framed yet (capture/tcp-stream.ts).
 */

/** Pending bytes: `buf[head, tail)`. */
export interface PendingBytes {
  buf: Uint8Array;
  head: number;
  tail: number;
}

/** Makes room for `n` pending bytes in all, moving the pending bytes to the front of a new buffer. */
export function reservePending(q: PendingBytes, n: number): void {
  if (q.buf.length - q.head >= n) return;
  const next = new Uint8Array(n);
  next.set(q.buf.subarray(q.head, q.tail), 0);
  q.buf = next;
  q.tail -= q.head;
  q.head = 0;
}

/**
 * Appends `bytes` behind `q`'s pending bytes. When they do not fit, the pending bytes move
 * to the front, into a buffer twice what they need (at least `minSize`) only when `buf`
 * is too small: appends stay amortised O(1) and memory follows what is pending, not what
 * went through.
 */
export function appendPending(q: PendingBytes, bytes: Uint8Array, minSize = 0): void {
  if (q.tail + bytes.length > q.buf.length) {
    const live = q.tail - q.head;
    const size = Math.max(minSize, q.buf.length, (live + bytes.length) * 2);
    const next = size === q.buf.length ? q.buf : new Uint8Array(size);
    next.set(q.buf.subarray(q.head, q.tail), 0);
    q.buf = next;
    q.head = 0;
    q.tail = live;
  }
  q.buf.set(bytes, q.tail);
  q.tail += bytes.length;
}
