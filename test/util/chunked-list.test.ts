import { describe, expect, it } from 'vitest';
import { ChunkedList } from '../../src/util/chunked-list.js';
import { rng } from '../helpers/rng.js';

describe('a list held in chunks', () => {
  it('reads, appends and truncates as an array does, across chunk boundaries', () => {
    const r = rng(11);
    const list = new ChunkedList<number>([1, 2, 3]);
    const array = [1, 2, 3];
    const edges = [0, 1, 65535, 65536, 65537, 131071, 131072, 131073];
    let longest = 0;
    for (let step = 0; step < 40; step++) {
      if (r() < 0.35 && array.length > 0) {
        // Cut at a chunk edge now and then, else anywhere.
        const near = edges.filter((e) => e <= array.length);
        const n = r() < 0.5 ? near[Math.floor(r() * near.length)]! : Math.floor(r() * array.length);
        list.truncate(n);
        array.length = n;
      } else {
        const add = Math.floor(r() * 60000);
        for (let i = 0; i < add; i++) {
          list.push(step * 100000 + i);
          array.push(step * 100000 + i);
        }
      }
      expect(list.length).toBe(array.length);
      longest = Math.max(longest, array.length);
      for (const i of [...edges, array.length - 1, array.length, -1]) expect(list.at(i), `at ${i} of ${array.length}`).toBe(array[i]);
      for (let k = 0; k < 200; k++) {
        const i = Math.floor(r() * array.length);
        if (list.at(i) !== array[i]) expect(list.at(i), `at ${i}`).toBe(array[i]);
      }
    }
    expect(longest).toBeGreaterThan(131073);
  });
});
