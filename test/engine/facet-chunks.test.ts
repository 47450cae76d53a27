import { afterAll, describe, expect, it } from 'vitest';
import type { Doc } from '../../src/engine/documents/primary-key.js';
import { FacetFixture } from './facet-fixture.js';
import { rng } from '../helpers/rng.js';

const fixtures: FacetFixture[] = [];
afterAll(async () => {
  for (const f of fixtures) await f.close();
});

function chunksOf(fx: FacetFixture, name: string): unknown {
  const f = fx.index.state.field(name)!;
  const plain = <K>(m: Map<number, Iterable<K>>) => [...m].map(([c, s]) => [c, [...s].map(String).sort()]).sort((a, b) => (a[0] as number) - (b[0] as number));
  return { numbers: plain(f.numberChunks), strings: plain(f.stringChunks) };
}

describe('facet chunk lists after batches', () => {
  it('name the values with documents in each chunk, as a reopened index works them out from the postings', async () => {
    const fx = await FacetFixture.open({ filterableAttributes: ['price', 'tag'] });
    fixtures.push(fx);
    const r = rng(9);
    const doc = (): Doc => ({ price: Math.floor(r() * 40), tag: ['red', 'Red', 'blue', 'green', 'teal'][Math.floor(r() * 5)]! });
    for (let batch = 0; batch < 12; batch++) {
      const changes: Record<number, Doc | null> = {};
      // Docids across five chunks of 4,096; values moving between chunks, appearing and vanishing.
      for (let k = 0; k < 300; k++) {
        const docid = Math.floor(r() * 20_000);
        changes[docid] = r() < 0.2 && fx.docs.has(docid) ? null : doc();
      }
      await fx.apply(changes);
    }
    const live = { price: chunksOf(fx, 'price'), tag: chunksOf(fx, 'tag') };
    const price = () => fx.index.state.field('price')!;
    const livePostings = new Map([...price().numbers].map(([n, d]) => [n, [...d]]));
    const liveRuns = price().numberRuns();
    await fx.reopen();
    expect(live).toEqual({ price: chunksOf(fx, 'price'), tag: chunksOf(fx, 'tag') });
    // Numbers are read into one array in number order: the same postings, and runs ready to use.
    expect(new Map([...price().numbers].map(([n, d]) => [n, [...d]]))).toEqual(livePostings);
    expect([...price().numberKeys()]).toEqual([...livePostings.keys()].sort((a, b) => a - b));
    expect({ offsets: [...price().numberRuns().offsets], docids: [...price().numberRuns().docids] }).toEqual({
      offsets: [...liveRuns.offsets],
      docids: [...liveRuns.docids],
    });
  });
});
