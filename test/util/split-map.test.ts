import { describe, expect, it } from 'vitest';
import { OrderedSplitMap, SplitMap } from '../../src/util/split-map.js';
import { rng } from '../helpers/rng.js';

describe('SplitMap', () => {
  for (const [kind, ordered] of [['number', true], ['string', true], ['number', false], ['string', false]] as const) {
    it(`reads like a Map${ordered ? ', insertion order included,' : ''} with ${kind} keys`, () => {
      const r = rng(kind === 'number' ? 1 : 2);
      const ref = new Map<string | number, number>();
      const m = ordered ? new OrderedSplitMap<string | number, number>() : new SplitMap<string | number, number>();
      for (let i = 0; i < 20_000; i++) {
        const n = Math.floor(r() * 5000);
        const key = kind === 'number' ? n : `doc-${n}`;
        if (r() < 0.1) expect(m.delete(key)).toBe(ref.delete(key));
        else {
          m.set(key, i);
          ref.set(key, i);
        }
      }
      expect(m.size).toBe(ref.size);
      const sorted = <T>(a: T[]) => (ordered ? a : a.sort((x, y) => (String(x) < String(y) ? -1 : String(x) > String(y) ? 1 : 0)));
      expect(sorted([...m])).toEqual(sorted([...ref]));
      expect(sorted([...m.keys()])).toEqual(sorted([...ref.keys()]));
      expect(sorted([...m.values()])).toEqual(sorted([...ref.values()]));
      for (let n = 0; n < 5000; n += 7) {
        const key = kind === 'number' ? n : `doc-${n}`;
        expect(m.get(key)).toBe(ref.get(key));
        expect(m.has(key)).toBe(ref.has(key));
      }
    });
  }
});
