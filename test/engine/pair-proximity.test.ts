// Pair costs read in bulk from the posting lists, against the same costs found document by
// document from every pair of sources' occurrences: whichever way bulkPairCosts joins the
// lists (each over the bucket, a short list's documents looked up in a long one, or costs a
// state keeps for two common words), the costs must be the same.

import { describe, expect, it } from 'vitest';
import { buildUnits, type Unit } from '../../src/engine/search/derivations.js';
import { bulkPairCosts, closestPair, KEPT_PAIR_COSTS, MAX_PAIR_COST, type KeptPairCostTable } from '../../src/engine/search/pair-proximity.js';
import { parseQuery } from '../../src/engine/search/query-parser.js';
import type { IndexState } from '../../src/engine/fulltext/index-state.js';
import { rng } from '../bench/wordnet.js';
import { buildIndex } from './search-helpers.js';

function unitsOf(state: IndexState, q: string): Unit[] {
  const terms = parseQuery(state.tokenizer.tokenize(q), { wordsLimit: 10, prefixAllowed: true }).terms;
  return buildUnits(state, terms, { typoEnabled: true, thresholds: { oneTypo: 5, twoTypos: 9 }, disableOnWords: new Set(), disableOnNumbers: false });
}

/** Every source pair's occurrences of each document, scanned whole. */
function bruteCosts(left: Unit, right: Unit, bucket: Uint32Array, weights: Int32Array, n: number): Uint8Array {
  const out = new Uint8Array(n).fill(MAX_PAIR_COST);
  const span = left.isPhrase ? left.qposEnd - left.qpos : 0;
  const runOf = (docs: Uint32Array, d: number): [number, number] => {
    const a = docs.indexOf(d);
    if (a < 0) return [0, 0];
    let b = a;
    while (b < docs.length && docs[b] === d) b++;
    return [a, b];
  };
  for (const d of bucket) {
    for (const sa of left.sources) {
      const [a0, a1] = runOf(sa.posting.docs, d);
      for (const sb of right.sources) {
        const [b0, b1] = runOf(sb.posting.docs, d);
        if (a0 === a1 || b0 === b1) continue;
        out[d] = Math.min(out[d]!, closestPair(sa.posting.fps, a0, a1, span, sb.posting.fps, b0, b1, false, weights));
      }
    }
  }
  return out;
}

describe('bulk pair costs', () => {
  it('match each document’s own occurrences, through every way of joining the lists', async () => {
    // "in" and "the" in nearly every document at seeded distances; rare words starting with
    // "the" (a prefix's short lists); "i n" split apart in a few (a split source).
    const r = rng(23);
    const rnd = (n: number) => Math.floor(r() * n);
    const fill = ['lamp', 'river', 'stone', 'cloud', 'glass', 'wheat', 'amber', 'coral'];
    const rare = ['theme', 'thermal', 'thesis'];
    const docs = Array.from({ length: 2600 }, (_, i) => {
      const words = Array.from({ length: 20 + rnd(20) }, () => fill[rnd(fill.length)]!);
      const at = rnd(words.length - 8);
      if (i % 50 !== 0) words[at] = 'in';
      words[at + 1 + rnd(5)] = i % 13 === 0 ? rare[rnd(rare.length)]! : 'the';
      if (i % 7 === 0) words[rnd(words.length)] = 'the';
      if (i % 97 === 0) words.splice(rnd(words.length), 0, 'i', 'n', ...(i % 2 === 0 ? ['the'] : []));
      return { id: i, t: words.join(' ') };
    });
    const state = await buildIndex(docs);
    const [left, right] = unitsOf(state, 'in the');
    expect(left!.sources.some((s) => s.wordId < 0)).toBe(true);
    expect(right!.sources.length).toBeGreaterThan(2);
    const weights = state.rules.weightTable();
    const n = state.capacity + 1;
    const all = state.docids;
    // The whole matched set, a large slice, and a small one (the kept costs' other side).
    const buckets = [all, all.filter((_, i) => i % 3 !== 0), all.filter((_, i) => i % 40 === 0)];
    // Each pair of sources alone (a lower cost of another pair would hide a wrong join), then all.
    const pairs: [Unit, Unit][] = [[left!, right!]];
    for (const sa of left!.sources) for (const sb of right!.sources) pairs.push([{ ...left!, sources: [sa] }, { ...right!, sources: [sb] }]);
    const memo = new Map<string, unknown>();
    let costed = 0;
    for (const bucket of buckets) {
      for (const [l, r] of pairs) {
        const expected = bruteCosts(l, r, bucket, weights, n);
        const joined = new Uint8Array(n).fill(MAX_PAIR_COST);
        bulkPairCosts(l, r, bucket, joined, weights, false);
        const first = new Uint8Array(n).fill(MAX_PAIR_COST);
        bulkPairCosts(l, r, bucket, first, weights, false, null, memo);
        const again = new Uint8Array(n).fill(MAX_PAIR_COST);
        bulkPairCosts(l, r, bucket, again, weights, false, null, memo);
        const at = (costs: Uint8Array) => Array.from(bucket, (d) => costs[d]);
        expect(at(joined)).toEqual(at(expected));
        expect(at(first)).toEqual(at(expected));
        expect(at(again)).toEqual(at(expected));
        if (bucket === all && at(expected).some((c) => c! < MAX_PAIR_COST)) costed++;
      }
    }
    expect((memo.get(KEPT_PAIR_COSTS) as KeptPairCostTable).entries.size).toBeGreaterThan(0);
    // Every pair has documents closer than the cap, but some of the split with a rare word.
    expect(costed).toBeGreaterThanOrEqual(pairs.length - (right!.sources.length - 1));
    // Some documents of each cost, so that a wrong join cannot hide behind equal answers.
    const costs = bruteCosts(left!, right!, all, weights, n);
    for (let c = 0; c <= MAX_PAIR_COST; c++) expect(Array.from(all).some((d) => costs[d] === c)).toBe(true);
  });
  it('keeps a common pair once the buckets it was joined for add up to its whole lists', async () => {
    const r = rng(29);
    const rnd = (n: number) => Math.floor(r() * n);
    const fill = ['lamp', 'river', 'stone', 'cloud', 'glass', 'wheat'];
    const docs = Array.from({ length: 3000 }, (_, i) => {
      const words = Array.from({ length: 10 + rnd(10) }, () => fill[rnd(fill.length)]!);
      const at = rnd(words.length - 5);
      words[at] = 'in';
      words[at + 1 + rnd(4)] = 'or';
      return { id: i, t: words.join(' ') };
    });
    const state = await buildIndex(docs);
    // A query with a word after "or": neither unit is a prefix with derivations of its own.
    const [left, right] = unitsOf(state, 'in or lamp');
    const weights = state.rules.weightTable();
    const n = state.capacity + 1;
    const all = state.docids;
    const memo = new Map<string, unknown>();
    const kept = () => (memo.get(KEPT_PAIR_COSTS) as KeptPairCostTable | undefined)?.entries.size ?? 0;
    // Buckets of 3% of the documents: joined one by one until they add up to a quarter.
    let calls = 0;
    for (let k = 0; k < 20 && kept() === 0; k++, calls++) {
      const bucket = all.filter((_, i) => i % 33 === k);
      const out = new Uint8Array(n).fill(MAX_PAIR_COST);
      bulkPairCosts(left!, right!, bucket, out, weights, false, null, memo);
      const want = bruteCosts(left!, right!, bucket, weights, n);
      expect(Array.from(bucket, (d) => out[d])).toEqual(Array.from(bucket, (d) => want[d]));
    }
    expect(calls).toBeGreaterThan(5);
    expect(calls).toBeLessThan(10);
    expect(kept()).toBe(1);
  });
});
