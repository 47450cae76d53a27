// The core never reads a clock or Math.random: every random choice (only the
// election timeout today) comes from an injected source so that a seed fully
// determines a run.

/** A source of uniform numbers in [0, 1). */
export type Rand = () => number;

/**
 * mulberry32: a tiny, fast 32-bit PRNG with good enough spread for jittering
 * timeouts and for driving simulations. Not for anything cryptographic.
 */
export function mulberry32(seed: number): Rand {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a of a string: derives a stable default seed from a node id. */
export function hashSeed(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** An integer in [lo, hi). */
export function randInt(rand: Rand, lo: number, hi: number): number {
  return lo + Math.floor(rand() * (hi - lo));
}
