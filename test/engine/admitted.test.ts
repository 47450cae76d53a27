import { describe, expect, it } from 'vitest';
import type { Doc } from '../../src/engine/documents/primary-key.js';
import { buildIndex, search } from './search-helpers.js';

describe('documents a search may match', () => {
  it('are those the filter allows, less those holding a negated word or phrase', async () => {
    const colors = ['red', 'blue', 'green'];
    const docs: Doc[] = Array.from({ length: 60 }, (_, i) => ({ id: i, title: `${colors[i % 3]} shoe ${i % 4 === 0 ? 'dark night' : 'day'}` }));
    const state = await buildIndex(docs);
    const allowed = new Uint8Array(61);
    for (let d = 0; d < 60; d += 2) allowed[d] = 1;
    const expected = (keep: (d: number) => boolean) => docs.map((_, d) => d).filter(keep);
    const matched = (q: string, withFilter: boolean) =>
      [...search(state, q, { allowed: withFilter ? allowed : null, limit: 100 }).hits.map((h) => h.docid)].sort((a, b) => a - b);
    const universe = (q: string, withFilter: boolean) => [...search(state, q, { allowed: withFilter ? allowed : null, limit: 100 }).universe];
    expect(matched('shoe -red', true)).toEqual(expected((d) => d % 2 === 0 && d % 3 !== 0));
    expect(matched('shoe -red', false)).toEqual(expected((d) => d % 3 !== 0));
    expect(matched('shoe -"dark night"', true)).toEqual(expected((d) => d % 2 === 0 && d % 4 !== 0));
    expect(matched('shoe', true)).toEqual(expected((d) => d % 2 === 0));
    expect(universe('-blue', true)).toEqual(expected((d) => d % 2 === 0 && d % 3 !== 1));
    expect(universe('-blue', false)).toEqual(expected((d) => d % 3 !== 1));
    expect(universe('', true)).toEqual(expected((d) => d % 2 === 0));
    // The filter's own mask is left as it was.
    expect([...allowed].filter((x) => x === 1)).toHaveLength(30);
    // A mask shorter than the index admits nothing past its end, whatever the last search left.
    expect(matched('shoe -red', false).length).toBeGreaterThan(30);
    const short = new Uint8Array(10).fill(1);
    expect([...search(state, 'shoe -red', { allowed: short, limit: 100 }).hits.map((h) => h.docid)].sort((a, b) => a - b)).toEqual(
      expected((d) => d < 10 && d % 3 !== 0),
    );
  });
});
