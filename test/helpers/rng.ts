/** A seeded pseudo-random generator in [0, 1) (a 32-bit LCG): the same draws on every run. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}
