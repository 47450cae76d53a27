// Buffers allocated with a few free bytes in front of their contents, so that a later step
// can put its own header there instead of copying the contents behind it: the Raft log
// stores an import's command (12 MiB for 50,000 documents) behind a 9-byte entry header, and
// a copy of that size onto fresh pages held the thread 40-50 ms.

/** Free bytes in front of a buffer from `withHeadroom`. */
export const HEADROOM = 16;

/** The free bytes left in front of each such buffer's contents, until claimed. */
const free = new WeakMap<ArrayBufferLike, number>();

/** A buffer of `size` bytes with HEADROOM free bytes in front of it, in memory of its own. */
export function withHeadroom(size: number): Buffer {
  const whole = Buffer.allocUnsafeSlow(HEADROOM + size);
  free.set(whole.buffer, HEADROOM);
  return whole.subarray(HEADROOM);
}

/**
 * `view` with `n` bytes in front of it, when those bytes are free headroom, or null (then
 * the caller copies). Claimed once: a second claim of the same buffer (the same command
 * proposed again) gets null, so no header is written over one still to be stored.
 */
export function claimHeadroom(view: Uint8Array, n: number): Buffer | null {
  const room = free.get(view.buffer);
  if (room === undefined || view.byteOffset !== room || n > room) return null;
  free.delete(view.buffer);
  return Buffer.from(view.buffer, view.byteOffset - n, view.byteLength + n);
}
