// Sorting on the thread that serves requests: runs sorted one at a time, then merged pass by
// pass, with turns for the event loop in between (a batch sorts 100,000 new words).

import type { Yielder } from './yielder.js';

const RUN = 4096;

/** `items` sorted by `cmp` (stable), in a new array. */
export async function sortInTurns<T>(items: readonly T[], cmp: (a: T, b: T) => number, yielder: Yielder): Promise<T[]> {
  const n = items.length;
  let src = new Array<T>(n);
  for (let i = 0; i < n; i += RUN) {
    const run = items.slice(i, i + RUN).sort(cmp);
    for (let j = 0; j < run.length; j++) src[i + j] = run[j]!;
    await yielder.maybe();
  }
  let dst = new Array<T>(n);
  for (let width = RUN; width < n; width *= 2) {
    let k = 0;
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      while (i < mid && j < hi) {
        dst[k++] = cmp(src[j]!, src[i]!) < 0 ? src[j++]! : src[i++]!;
        if ((k & 16383) === 0) await yielder.maybe();
      }
      while (i < mid) dst[k++] = src[i++]!;
      while (j < hi) dst[k++] = src[j++]!;
    }
    [src, dst] = [dst, src];
    await yielder.maybe();
  }
  return src;
}
