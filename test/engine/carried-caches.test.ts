import { describe, expect, it, vi } from 'vitest';
import type { Doc } from '../../src/engine/documents/primary-key.js';
import { applyChanges, buildFromDocuments, postingOf, type IndexState } from '../../src/engine/fulltext/index-state.js';
import { distinctDocs, type Posting } from '../../src/engine/fulltext/postings.js';
import { patched } from '../../src/engine/fulltext/segment.js';
import { SortedWords } from '../../src/engine/fulltext/word-table.js';
import { KEPT_SCANS, MatchTable, type KeptScanTable } from '../../src/engine/search/match-table.js';
import type { Unit } from '../../src/engine/search/derivations.js';
import { KEPT_PAIR_COSTS, type KeptPairCostTable } from '../../src/engine/search/pair-proximity.js';
import { mayDerive, typoDerivations } from '../../src/engine/search/typo-search.js';
import { defaultSettings } from '../../src/engine/settings/settings.js';
import type { DocChange } from '../../src/engine/structures/search-index.js';
import { Yielder } from '../../src/util/yielder.js';
import { rng } from '../helpers/rng.js';
import { search } from './search-helpers.js';

// A state carries what its searches cached (lists read, typo derivations, word splits) to the
// state after a batch, keeping what the batch left valid. Whatever it keeps, every search
// must answer as on an index built from scratch from the same documents.

const WORDS = [
  'brown', 'brawn', 'crown', 'browse', 'brow', 'frown', 'grown', 'bread', 'broad', 'fox', 'foxes',
  'box', 'quick', 'quack', 'lazy', 'hazy', 'dog', 'dig', 'sun', 'sunny', 'rain', 'train', 'brain',
  'the', 'of', 'and', 'a',
];
/** Words that first come with later batches, near the others in spelling. */
const LATER = ['browns', 'crowd', 'foxy', 'bron', 'quicker', 'dogs', 'trains', 'brian', 'lazily', 'sunn'];
const QUERIES = [
  'brown', 'brwn', 'bron', 'crwn', 'browm', 'br', 'b', 'fo', 'q', 'quik', 'lazzy', 'dgo', 'brownfox',
  'quickbrown', 'sunnyrain', 'brown fox', 'quick bro', 'the brown', 'the', 'trian', 'foxy', 'crowd',
  'crwod', 'brians', 'dogs', 'sunn', 'quicker', 'lazily', 'of the', 'a b', 'hazzy', 'hzy', 'haz',
];

function text(r: () => number, vocab: string[], n: number): string {
  return Array.from({ length: n }, () => vocab[Math.floor(r() * vocab.length)]!).join(' ');
}

/** The state after a batch adding documents `from` to `to` (docid = id), added to `docs` too. */
async function addDocuments(state: IndexState, docs: Map<number, Doc>, make: (id: number) => Doc, from: number, to: number): Promise<IndexState> {
  const changes: DocChange[] = [];
  for (let d = from; d < to; d++) {
    const doc = make(d);
    changes.push({ docid: d, before: null, after: doc });
    docs.set(d, doc);
  }
  const staged = await applyChanges(state, changes, new Yielder());
  staged.commitTables();
  return staged.state;
}

/** Per query and page (offset, limit): the candidates, then each hit's docid and score. */
function rankedPages(s: IndexState, queries: readonly string[], pages: readonly (readonly [number, number])[]): unknown[] {
  return queries.flatMap((q) => pages.map(([offset, limit]) => {
    const out = search(s, q, { offset, limit });
    return [out.candidates, ...out.hits.map((h) => [h.docid, h.score])];
  }));
}

async function fresh(docs: Map<number, Doc>): Promise<IndexState> {
  const staged = await buildFromDocuments(defaultSettings(), [...docs].sort((a, b) => a[0] - b[0]), new Yielder());
  staged.commitTables();
  return staged.state;
}

/**
 * Up to `n` picks of live documents, each replaced by a new one of the same id or, where
 * `deletes(k)`, deleted, then `added` new documents from docid `next` on: the changes, applied
 * to `docs` too.
 */
function randomBatch(
  docs: Map<number, Doc>, rnd: (n: number) => number, make: (id: number) => Doc,
  n: number, deletes: (k: number) => boolean, next: number, added: number,
): DocChange[] {
  const changes: DocChange[] = [];
  const live = [...docs.keys()];
  for (let k = 0; k < n; k++) {
    const d = live[rnd(live.length)]!;
    if (changes.some((c) => c.docid === d)) continue;
    const after = deletes(k) ? null : make(docs.get(d)!['id'] as number);
    changes.push({ docid: d, before: docs.get(d)!, after });
    if (after) docs.set(d, after);
    else docs.delete(d);
  }
  for (let k = 0; k < added; k++) {
    const d = make(next + k);
    changes.push({ docid: next + k, before: null, after: d });
    docs.set(next + k, d);
  }
  return changes;
}

const answer = (s: IndexState, q: string) => {
  const out = search(s, q, { limit: 60 });
  const words = out.units.map((u) => [...u.highlight.words].sort());
  return { total: out.candidates, hits: out.hits.map((h) => [h.docid, h.score]), words };
};

describe('caches carried from state to state', () => {
  it('answer every search as an index built from scratch, batch after batch', async () => {
    const r = rng(20261129);
    const docs = new Map<number, Doc>();
    let next = 0;
    const make = (vocab: string[]): Doc => ({ id: next, title: text(r, vocab, 1 + Math.floor(r() * 3)), body: text(r, vocab, 3 + Math.floor(r() * 12)) });
    for (; next < 120; next++) docs.set(next, make(WORDS));
    let state = await fresh(docs);
    let later = 0;
    for (let round = 0; round < 14; round++) {
      for (const q of QUERIES) search(state, q, { limit: 60 });
      const changes: DocChange[] = [];
      const vocab = later < LATER.length && round % 2 === 1 ? [...WORDS, LATER[later++]!] : WORDS;
      const ops = round === 6 ? 0 : 1 + Math.floor(r() * 4);
      const touched = new Set<number>();
      for (let k = 0; k < ops; k++) {
        const live = [...docs.keys()].filter((d) => !touched.has(d));
        const pick = live[Math.floor(r() * live.length)]!;
        const op = r();
        if (op < 0.4) {
          const d = make(vocab);
          touched.add(next);
          changes.push({ docid: next, before: null, after: d });
          docs.set(next++, d);
        } else if (op < 0.75) {
          const d = { ...make(vocab), id: docs.get(pick)!['id'] };
          touched.add(pick);
          changes.push({ docid: pick, before: docs.get(pick)!, after: d });
          docs.set(pick, d);
        } else {
          touched.add(pick);
          changes.push({ docid: pick, before: docs.get(pick)!, after: null });
          docs.delete(pick);
        }
      }
      // A word's only documents go (and later ones bring it back): derivations that reached it change.
      if (round === 6) {
        for (const [d, doc] of docs) {
          if (touched.has(d) || !`${doc['title']} ${doc['body']}`.includes('hazy')) continue;
          changes.push({ docid: d, before: doc, after: null });
          docs.delete(d);
        }
      }
      const staged = await applyChanges(state, changes, new Yielder());
      staged.commitTables();
      state = staged.state;
      const scratch = await fresh(docs);
      for (const q of QUERIES) expect(answer(state, q), `round ${round}: "${q}"`).toEqual(answer(scratch, q));
    }
  });

  it('keep what a batch did not touch and read again what it did', async () => {
    const docs = new Map<number, Doc>(Array.from({ length: 40 }, (_, i) => [i, { id: i, body: i % 2 ? 'brown fox' : 'lazy dog' }] as [number, Doc]));
    const base = await fresh(docs);
    for (const q of ['brwn', 'lazzy', 'brown', 'lazy', 'b', 'l', 'lazydog']) search(base, q);
    const lazy = base.sorted.idOf('lazy')!;
    const brown = base.sorted.idOf('brown')!;
    const brownBefore = Array.from(postingOf(base, brown).docs);
    expect(brownBefore).toContain(3);
    const staged = await applyChanges(base, [{ docid: 3, before: docs.get(3)!, after: { id: 3, body: 'fox bread' } }], new Yielder());
    staged.commitTables();
    const next = staged.state;
    // The untouched word's list and derivations are the same objects; the replaced document's words are read anew.
    expect(postingOf(next, lazy)).toBe(postingOf(base, lazy));
    const brownAfter = Array.from(postingOf(next, brown).docs);
    expect(brownAfter).toEqual(Array.from(postingOf(await fresh(new Map([...docs, [3, { id: 3, body: 'fox bread' }]])), brown).docs));
    expect(brownAfter).not.toContain(3);
    // A search still running on the older state reads its own lists, not those the newer state put in the caches they share.
    expect(Array.from(postingOf(base, brown).docs)).toEqual(brownBefore);
    expect(search(base, 'brown').hits.map((h) => h.docid)).toContain(3);
    const typos = next.memo.get('typos') as { entries: Map<string, unknown> };
    expect([...typos.entries.keys()].some((k) => k.endsWith('lazzy'))).toBe(true);
    expect(next.memo.get('pairs')).toBeDefined();
  });
});

describe('pair costs carried from state to state', () => {
  it('are computed again for the documents a batch changed, and rank as from scratch', async () => {
    // "in" and "or" in every document (kept pair costs need both in thousands), at seeded
    // distances that batches change.
    const r = rng(12);
    const rnd = (n: number) => Math.floor(r() * n);
    const fill = ['lamp', 'river', 'stone', 'cloud', 'glass', 'wheat'];
    const make = (i: number): Doc => {
      const words = Array.from({ length: 12 + rnd(12) }, () => fill[rnd(fill.length)]!);
      const at = rnd(words.length - 6);
      words[at] = 'in';
      words[at + 1 + rnd(4)] = 'or';
      return { id: i, t: words.join(' ') };
    };
    const docs = new Map<number, Doc>(Array.from({ length: 2300 }, (_, i) => [i, make(i)] as [number, Doc]));
    let state = await fresh(docs);
    let next = docs.size;
    const queries = ['in or', 'or in', 'in or lamp', 'in l', 'lamp in o'];
    const pages = [[0, 10], [0, 1], [1000, 40], [2200, 200]] as const;
    const ranked = (s: IndexState) => queries.flatMap((q) => pages.map(([offset, limit]) => search(s, q, { offset, limit }).hits.map((h) => [h.docid, h.score])));
    for (let round = 0; round < 5; round++) {
      ranked(state);
      const changes = randomBatch(docs, rnd, make, 30, (k) => round % 2 === 1 && k % 3 === 0, next, 10);
      next += 10;
      const staged = await applyChanges(state, changes, new Yielder());
      staged.commitTables();
      state = staged.state;
      const table = state.memo.get(KEPT_PAIR_COSTS) as KeptPairCostTable;
      expect(ranked(state), `round ${round}`).toEqual(ranked(await fresh(docs)));
      expect(table.entries.size, `round ${round}`).toBeGreaterThan(0);
    }
  });
});

describe('pair costs of words seldom close', () => {
  it('are carried through a batch of thousands of documents, and rank as from scratch', async () => {
    // "in" and "or" in every document, close in few: the kept costs hold few documents but
    // were joined from both whole lists, so a batch larger than those few is patched, not
    // dropped and joined again.
    const r = rng(23);
    const rnd = (n: number) => Math.floor(r() * n);
    const fill = ['lamp', 'river', 'stone', 'cloud'];
    const make = (i: number): Doc => {
      const words = Array.from({ length: 14 }, () => fill[rnd(fill.length)]!);
      words[0] = 'in';
      words[i % 50 === 0 ? 1 : 9 + rnd(5)] = 'or';
      return { id: i, t: words.join(' ') };
    };
    const docs = new Map<number, Doc>(Array.from({ length: 6000 }, (_, i) => [i, make(i)] as [number, Doc]));
    let state = await fresh(docs);
    const ranked = (s: IndexState) => [[0, 10], [100, 20], [10_000, 30]].map(([offset, limit]) => search(s, 'in or', { offset, limit }).hits.map((h) => [h.docid, h.score]));
    ranked(state);
    const kept = (s: IndexState) => [...((s.memo.get(KEPT_PAIR_COSTS) as KeptPairCostTable | undefined)?.entries.values() ?? [])];
    // The word "or" and its indexed prefix list, each paired with "in".
    expect(kept(state).length).toBeGreaterThan(0);
    for (const e of kept(state)) expect(e.docs.length).toBeLessThan(200);
    const n = kept(state).length;
    state = await addDocuments(state, docs, make, 6000, 11_000);
    expect(kept(state).map((e) => e.pending?.length)).toEqual(Array(n).fill(5000));
    expect(ranked(state)).toEqual(ranked(await fresh(docs)));
    expect(kept(state).map((e) => e.pending)).toEqual(Array(n).fill(null));
  });
});

describe('scans carried from state to state', () => {
  it('are patched for the documents a batch changed, and rank as from scratch', async () => {
    // Long lists (a one-letter prefix, a common word) are scanned once per state and kept;
    // after a batch the scan is patched from the previous state's.
    const r = rng(13);
    const rnd = (n: number) => Math.floor(r() * n);
    const xs = ['xylo', 'xeno', 'xray', 'xenon', 'x'];
    const fill = ['lamp', 'river'];
    const field = (n: number) => Array.from({ length: n }, () => (r() < 0.4 ? xs[rnd(xs.length)]! : fill[rnd(fill.length)]!)).join(' ');
    const make = (i: number): Doc => ({ id: i, title: `${xs[rnd(xs.length)]} ${field(1 + rnd(4))}`, body: `${field(4 + rnd(10))} ${xs[rnd(xs.length)]}` });
    const docs = new Map<number, Doc>(Array.from({ length: 11_000 }, (_, i) => [i, make(i)] as [number, Doc]));
    let state = await fresh(docs);
    let next = docs.size;
    const queries = ['x', 'lamp', 'river'];
    const pages = [[0, 20], [5000, 50], [10_900, 200]] as const;
    const ranked = (s: IndexState) => rankedPages(s, queries, pages);
    for (let round = 0; round < 4; round++) {
      ranked(state);
      const table = state.memo.get(KEPT_SCANS) as KeptScanTable;
      expect(table.entries.size, `round ${round}`).toBeGreaterThanOrEqual(queries.length);
      const changes = randomBatch(docs, rnd, make, 25, (k) => k % 4 === 0, next, 5);
      next += 5;
      const staged = await applyChanges(state, changes, new Yielder());
      staged.commitTables();
      state = staged.state;
      const carried = state.memo.get(KEPT_SCANS) as KeptScanTable;
      expect([...carried.entries.values()].every((e) => e.pending !== null), `round ${round}`).toBe(true);
      expect(ranked(state), `round ${round}`).toEqual(ranked(await fresh(docs)));
      // Each query was answered from a patched scan: kept anew, nothing pending.
      expect([...carried.entries.values()].filter((e) => e.pending === null).length, `round ${round}`).toBeGreaterThanOrEqual(queries.length);
    }
  });
});

describe('scans of the words of a longer query carried from state to state', () => {
  it('are patched word by word, and rank as from scratch', async () => {
    // Each word's scan is kept at its query position; after a batch it is patched from the
    // previous state's and kept again, merged with the changed documents' slots.
    const r = rng(19);
    const rnd = (n: number) => Math.floor(r() * n);
    const fill = ['lamp', 'river', 'stone', 'x'];
    const field = (n: number) => Array.from({ length: n }, () => fill[rnd(fill.length)]!).join(' ');
    const make = (i: number): Doc => ({ id: i, title: field(1 + rnd(4)), body: field(6 + rnd(10)) });
    const docs = new Map<number, Doc>(Array.from({ length: 9000 }, (_, i) => [i, make(i)] as [number, Doc]));
    let state = await fresh(docs);
    let next = docs.size;
    const queries = ['lamp river', 'river stone lamp', 'stone x'];
    const pages = [[0, 20], [4000, 50], [8900, 200]] as const;
    const ranked = (s: IndexState) => rankedPages(s, queries, pages);
    const proto = MatchTable.prototype as unknown as { mergedScan(...args: unknown[]): unknown };
    const spy = vi.spyOn(proto, 'mergedScan');
    try {
      for (let round = 0; round < 4; round++) {
        ranked(state);
        const changes = randomBatch(docs, rnd, make, 40, (k) => k % 4 === 0, next, 8);
        next += 8;
        const staged = await applyChanges(state, changes, new Yielder());
        staged.commitTables();
        state = staged.state;
        expect(ranked(state), `round ${round}`).toEqual(ranked(await fresh(docs)));
        // Asked again, the state answers from the scans kept after the patch.
        expect(ranked(state), `round ${round}`).toEqual(ranked(await fresh(docs)));
      }
      // Which words a bucket scans whole depends on the batch; over the rounds, several were patched.
      expect(spy.mock.calls.length).toBeGreaterThanOrEqual(queries.length);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('scans carried through an import', () => {
  it('read only the documents a batch of new ones added, and rank as from scratch', async () => {
    // Batches past CARRY_MAX_DOCS that only add documents, some with words new to the index
    // (new short lists joining a prefix's union).
    const r = rng(17);
    const rnd = (n: number) => Math.floor(r() * n);
    const thes = Array.from({ length: 30 }, (_, i) => `the${String.fromCharCode(97 + (i % 26))}${i}`);
    const fill = ['lamp', 'river', 'stone', 'cloud'];
    let fresher = 0;
    const make = (i: number): Doc => {
      const words = Array.from({ length: 10 + rnd(20) }, () => fill[rnd(fill.length)]!);
      // Lists long enough to be kept (CACHED_SCAN_MIN_ENTRIES).
      for (let k = 0; k < 4; k++) words.splice(rnd(words.length), 0, 'the');
      if (i % 3 === 0) words.splice(rnd(words.length), 0, i >= 6000 && i % 9 === 0 ? `thenew${fresher++ % 40}` : thes[rnd(thes.length)]!);
      return { id: i, title: words.slice(0, 3).join(' '), body: words.slice(3).join(' ') };
    };
    const docs = new Map<number, Doc>(Array.from({ length: 6000 }, (_, i) => [i, make(i)] as [number, Doc]));
    let state = await fresh(docs);
    const queries = ['the', 'lamp', 'river'];
    const ranked = (s: IndexState) => queries.map((q) => {
      const out = search(s, q, { offset: 0, limit: 40 });
      return [out.candidates, ...out.hits.map((h) => [h.docid, h.score])];
    });
    // Entries each scan of a unit reads, by call.
    const reads: number[] = [];
    const proto = MatchTable.prototype as unknown as { scanUnit(u: Unit): void };
    const scanUnit = proto.scanUnit;
    const spy = vi.spyOn(proto, 'scanUnit').mockImplementation(function (this: { only: Uint32Array | null }, u: Unit) {
      // Whole lists, not the entries of chosen documents (see fillFromPostings).
      if (this.only === null) reads.push(u.sources.reduce((n, src) => n + src.posting.docs.length, 0));
      return scanUnit.call(this, u);
    });
    try {
      for (let round = 0; round < 3; round++) {
        ranked(state);
        const from = 6000 + round * 2000;
        state = await addDocuments(state, docs, make, from, from + 2000);
        const carried = state.memo.get(KEPT_SCANS) as KeptScanTable;
        expect(carried.entries.size, `round ${round}`).toBeGreaterThanOrEqual(queries.length);
        reads.length = 0;
        const got = ranked(state);
        const first = reads.slice();
        // Each unit's scan read the new documents' entries, not the whole lists.
        const whole = queries.map((q) => search(state, q).units[0]!.sources.reduce((n, src) => n + src.posting.docs.length, 0));
        expect(first.length, `round ${round}`).toBeGreaterThanOrEqual(queries.length);
        for (const n of first) expect(n, `round ${round}`).toBeLessThan(Math.min(...whole) / 2);
        expect(got, `round ${round}`).toEqual(ranked(await fresh(docs)));
      }
    } finally {
      spy.mockRestore();
    }
  });
});

describe('a carried list patched for a batch', () => {
  it('is the old list without the removed documents, with the new ones, in docid order', () => {
    const r = rng(7);
    const list = (docs: number[]): Posting => {
      const d: number[] = [];
      const f: number[] = [];
      for (const x of docs) for (let k = 0; k <= x % 3; k++) (d.push(x), f.push(x * 10 + k));
      return { docs: Uint32Array.from(d), fps: Uint32Array.from(f), ndocs: docs.length };
    };
    for (let round = 0; round < 300; round++) {
      const all = Array.from({ length: 40 }, (_, i) => i);
      const old = all.filter(() => r() < 0.5);
      const removed = old.filter(() => r() < 0.2);
      const added = all.filter((d) => (!old.includes(d) || removed.includes(d)) && r() < 0.3);
      const want = list([...old.filter((d) => !removed.includes(d)), ...added].sort((a, b) => a - b));
      const before = list(old);
      // The old list's distinct documents, when known, are patched along.
      if (round % 2 === 0) distinctDocs(before.docs);
      const got = patched(before, Uint32Array.from(removed), list(added));
      expect({ docs: Array.from(got.docs), fps: Array.from(got.fps), ndocs: got.ndocs }).toEqual({ docs: Array.from(want.docs), fps: Array.from(want.fps), ndocs: want.ndocs });
      expect(Array.from(distinctDocs(got.docs))).toEqual([...new Set(want.docs)]);
    }
  });
});

describe('the reach of a kept typo derivation', () => {
  it('includes every word the derivation search finds', () => {
    const r = rng(99);
    const letters = 'abcdeé';
    const word = () => Array.from({ length: 1 + Math.floor(r() * 6) }, () => letters[Math.floor(r() * letters.length)]).join('');
    const words = [...new Set(Array.from({ length: 400 }, word))];
    const sorted = SortedWords.build({ words });
    sorted.prepare();
    let found = 0;
    for (let i = 0; i < 300; i++) {
      const q = word();
      for (const maxTypo of [1, 2]) {
        for (const prefix of [false, true]) {
          const d = typoDerivations(sorted, q, maxTypo, prefix, () => true);
          for (const x of [...d.one, ...d.two]) {
            found++;
            expect(mayDerive(q, sorted.words[x]!, maxTypo, prefix), `${q} → ${sorted.words[x]} (${maxTypo}${prefix ? ', prefix' : ''})`).toBe(true);
          }
        }
      }
    }
    expect(found).toBeGreaterThan(1000);
    // And it is narrow enough to keep most derivations: far words are out.
    expect(mayDerive('brown', 'quick', 2, true)).toBe(false);
    expect(mayDerive('brown', 'crown', 1, false)).toBe(false);
    expect(mayDerive('brown', 'crown', 2, false)).toBe(true);
    expect(mayDerive('brown', 'bread', 1, true)).toBe(false);
    expect(mayDerive('brwn', 'browns', 1, true)).toBe(true);
  });
});
