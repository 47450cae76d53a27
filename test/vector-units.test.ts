import { describe, expect, it } from 'vitest';
import { normalized, shiftScore, similarityOf } from '../src/engine/vector/distance.js';
import { DocumentTemplate, truncateUtf8 } from '../src/engine/vector/document-template.js';
import { EmbedderState } from '../src/engine/vector/embedder-state.js';
import { hybridMerge } from '../src/engine/vector/semantic-search.js';
import { InjectableValue, TemplateError } from '../src/engine/vector/json-template.js';
import { TopK, VectorSlots } from '../src/engine/vector/vector-slots.js';
import { AnnGraph } from '../src/engine/vector/ann-graph.js';
import { scanRange } from '../src/engine/vector/exact-scan.js';

describe('templates', () => {
  it('truncates on a UTF-8 character boundary', () => {
    const s = 'インテル ザー ビーグル';
    expect(Buffer.byteLength(s)).toBe(32);
    expect(truncateUtf8(s, 32)).toBe(s);
    expect(truncateUtf8(s, 31)).toBe('インテル ザー ビーグ');
    expect(truncateUtf8(s, 25)).toBe('インテル ザー ビ');
    expect(truncateUtf8(s, 2)).toBe('');
  });

  it('renders the default template over searchable, non-null fields; objects print keys and values', () => {
    const t = new DocumentTemplate();
    expect(t.render({ id: 1, title: 'Kefir', tags: ['a', 'b'], owner: { name: 'x' }, gone: null, _vectors: { e: [1] } }, ['*'])).toBe(
      'id: 1\ntitle: Kefir\ntags: ab\nowner: namex\n',
    );
    expect(t.render({ id: 1, title: 'Kefir' }, ['title'])).toBe('title: Kefir\n');
    expect(new DocumentTemplate('{{doc.owner.name}} / {{doc.missing}}').render({ owner: { name: 'Ann' } }, ['*'])).toBe('Ann / ');
  });
});

describe('JSON templates of the rest embedder', () => {
  it('injects texts and extracts embeddings, repeated or single', () => {
    const req = new InjectableValue({ input: ['{{text}}', '{{..}}'], model: 'm' }, 'request', '{{text}}');
    expect(req.inject(['a', 'b'])).toEqual({ input: ['a', 'b'], model: 'm' });
    const res = new InjectableValue({ data: [{ embedding: '{{embedding}}' }, '{{..}}'] }, 'response', '{{embedding}}');
    expect(res.extract({ data: [{ embedding: [1] }, { embedding: [2] }] })).toEqual([[1], [2]]);
    const one = new InjectableValue({ a: { b: '{{text}}' } }, 'request', '{{text}}');
    expect(one.inject(['x'])).toEqual({ a: { b: 'x' } });
  });

  it('explains templates and responses that do not fit', () => {
    expect(() => new InjectableValue({ a: 1 }, 'request', '{{text}}')).toThrow('in `request`: "{{text}}" not found');
    expect(() => new InjectableValue(['{{text}}', 'x', '{{..}}'], 'request', '{{text}}')).toThrow('"{{..}}" expected at position #1, but found at position #2');
    const res = new InjectableValue({ data: '{{embedding}}' }, 'response', '{{embedding}}');
    expect(() => res.extract({ dat: [] })).toThrow(TemplateError);
  });
});

describe('scores', () => {
  it('maps cosine to the reference similarity and shifts by a distribution', () => {
    expect(similarityOf(1)).toBe(1);
    expect(similarityOf(0)).toBe(0.5);
    expect(similarityOf(-1)).toBe(0);
    expect(shiftScore(0.75, { mean: 0.75, sigma: 0.1 })).toBeCloseTo(0.5, 6);
    expect(shiftScore(0.1, { mean: 0.9, sigma: 0.08 })).toBeGreaterThan(0);
  });

  it('merges keyword and semantic hits by weighted score, each document once', () => {
    const kw = [{ docid: 1, score: 1 }, { docid: 2, score: 0.8 }];
    const sem = [{ docid: 2, similarity: 0.95 }, { docid: 3, similarity: 0.9 }];
    expect(hybridMerge(kw, sem, 0.5, 0, 10)).toEqual({
      hits: [
        { docid: 1, score: 1, semantic: false },
        { docid: 2, score: 0.95, semantic: true },
        { docid: 3, score: 0.9, semantic: true },
      ],
      semanticHitCount: 2,
    });
    expect(hybridMerge(kw, sem, 0.5, 1, 1).hits.map((h) => h.docid)).toEqual([2]);
  });
});

describe('vector store', () => {
  it('keeps one entry per document with its best vector', () => {
    const top = new TopK(2);
    top.offer(1, 0.2);
    top.offer(2, 0.5);
    top.offer(1, 0.9);
    top.offer(3, 0.1);
    expect(top.sorted()).toEqual([{ docid: 1, dot: 0.9 }, { docid: 2, dot: 0.5 }]);
  });

  const clustered = (n: number) => {
    let s = 7;
    const rnd = () => ((s = (s * 1664525 + 1013904223) >>> 0) / 4294967296 - 0.5);
    const dims = 32;
    const centres = Array.from({ length: 20 }, () => Float32Array.from({ length: dims }, rnd));
    const point = () => {
      const c = centres[Math.floor((rnd() + 0.5) * 20) % 20]!;
      return Float32Array.from(c, (x) => x + rnd() * 0.3);
    };
    const slots = new VectorSlots(dims);
    for (let i = 0; i < n; i++) slots.append(i, normalized(point()));
    return { slots, point };
  };

  it('finds the exact neighbours with the graph on clustered data', () => {
    const { slots, point } = clustered(3000);
    const g = new AnnGraph(slots, { connectivity: 12, expansionAdd: 64 });
    while (g.size < slots.count) g.insertNext();
    let hits = 0;
    for (let q = 0; q < 50; q++) {
      const u = normalized(point());
      const exact = new TopK(10);
      slots.scan(u, exact, null);
      const got = new Set(g.nearest(u, 64));
      hits += exact.sorted().filter((x) => got.has(x.docid)).length;
    }
    expect(hits / 500).toBeGreaterThan(0.95);
  });

  it('builds the same graph from the same slots, whatever searches ran in between', () => {
    // Scattered points and a sparse graph: its answers show any difference in its links.
    let seed = 3;
    const rnd = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 4294967296 - 0.5);
    const point = () => normalized(Float32Array.from({ length: 64 }, rnd));
    const slots = new VectorSlots(64);
    for (let i = 0; i < 5000; i++) slots.append(i, point());
    const sparse = { connectivity: 4, expansionAdd: 8 };
    const quiet = new AnnGraph(slots, sparse);
    const busy = new AnnGraph(slots, sparse);
    while (quiet.size < slots.count) quiet.insertNext();
    while (busy.size < slots.count) {
      busy.insertNext();
      if (busy.size % 7 === 0) busy.nearest(point(), 5);
    }
    for (let q = 0; q < 50; q++) {
      const u = point();
      expect(busy.nearest(u, 10)).toEqual(quiet.nearest(u, 10));
    }
  });

  it('answers from the published state while the graph catches up, without deleted documents', () => {
    const st = new EmbedderState('e', { fingerprint: '', key: '', dims: 2, quantized: false });
    for (let i = 0; i < 5000; i++) st.set(i, { userProvided: true, regenerate: false, textHash: null, vectors: [Float32Array.from([Math.cos(0.5 + i / 1000), Math.sin(0.5 + i / 1000)])] });
    st.finishIndexing();
    st.remove(0);
    st.set(5000, { userProvided: true, regenerate: false, textHash: null, vectors: [Float32Array.from([1, 0])] });
    const got = st.search(Float32Array.from([1, 0]), 3, null).map((x) => x.docid);
    expect(got).toContain(5000);
    expect(got).not.toContain(0);
  });

  it('scans long ranges natively with the same answers as the scalar loop', () => {
    const { slots, point } = clustered(5000);
    // Documents with several vectors, and killed slots.
    for (let i = 0; i < 5000; i++) slots.docOf[i] = i % 3 === 0 ? -1 : Math.floor(i / 4);
    for (const from of [0, 1000, 2000]) {
      for (let q = 0; q < 10; q++) {
        const u = normalized(point());
        const native = new TopK(10);
        const scalar = new TopK(10);
        scanRange(slots, u, native, null, from);
        slots.scan(u, scalar, null, from);
        expect(native.sorted()).toEqual(scalar.sorted());
      }
    }
  });

  describe('over the graph', () => {
    const { slots, point } = clustered(6000);
    const st = new EmbedderState('e', { fingerprint: '', key: '', dims: 32, quantized: false });
    for (let i = 0; i < slots.count; i++) st.set(i, { userProvided: true, regenerate: false, textHash: null, vectors: [Float32Array.from(slots.vector(i))] });
    st.finishIndexing();
    const exact = (q: Float32Array, k: number, ok: (d: number) => boolean) => {
      const top = new TopK(k);
      st.slots!.scan(normalized(q), top, ok);
      return top.sorted();
    };

    it('scores candidates exactly and keeps to the filter, small or large', () => {
      expect(st.graph!.size).toBe(6000);
      const q = point();
      expect(st.search(q, 10, null)).toEqual(exact(q, 10, () => true));
      const even = (d: number) => d % 2 === 0;
      const evens = Array.from({ length: 3000 }, (_, i) => i * 2);
      expect(st.search(q, 10, even, evens)).toEqual(exact(q, 10, even));
      const most = (d: number) => d % 10 !== 3;
      const mostList = Array.from({ length: 6000 }, (_, i) => i).filter(most);
      const got = st.search(q, 10, most, mostList);
      expect(got.every((x) => most(x.docid))).toBe(true);
      expect(got).toEqual(exact(q, 10, most));
      // A selective filter the graph cannot serve alone: asked for again, then scanned.
      const rare = (d: number) => d % 97 === 0;
      expect(st.search(q, 10, rare)).toEqual(exact(q, 10, rare));
    });

    it('leaves no trace of removed or replaced vectors', () => {
      const q = point();
      const before = st.search(q, 5, null).map((x) => x.docid);
      for (const d of before) st.remove(d);
      const moved = before[0]! + 1;
      st.set(moved, { userProvided: true, regenerate: false, textHash: null, vectors: [Float32Array.from(q).map((x) => -x)] });
      const after = st.search(q, 20, null);
      expect(after.map((x) => x.docid).filter((d) => before.includes(d) || d === moved)).toEqual([]);
      expect(after).toEqual(exact(q, 20, () => true));
    });
  });
});
