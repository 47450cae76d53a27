import { describe, expect, it } from 'vitest';
import { mergeArenas, type ListArena } from '../../src/engine/fulltext/list-arena.js';
import { Yielder } from '../../src/util/yielder.js';
import { rng } from '../helpers/rng.js';

type Entries = Map<number, [number, number][]>; // list id -> (docid, fp), by docid then fp

/** An arena holding, for each of its documents, a few entries in a few lists. */
function arenaOf(docids: number[], r: () => number, lists: number, big: number): { arena: ListArena; entries: Entries } {
  const entries: Entries = new Map();
  for (const d of [...docids].sort((a, b) => a - b)) {
    // List 0 is a common word with many entries per document.
    const n = 1 + Math.floor(r() * 6);
    for (let k = 0; k < n; k++) {
      const id = k === 0 ? 0 : 1 + Math.floor(r() * lists);
      const times = id === 0 ? big : 1 + Math.floor(r() * 2);
      let l = entries.get(id);
      if (!l) entries.set(id, (l = []));
      for (let t = 0; t < times; t++) l.push([d, k * 100 + t]);
    }
  }
  for (const l of entries.values()) l.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const ids = [...entries.keys()].sort((a, b) => a - b);
  const offsets = [0];
  const ndocs: number[] = [];
  const docs: number[] = [];
  const fps: number[] = [];
  for (const id of ids) {
    const l = entries.get(id)!;
    for (const [d, fp] of l) {
      docs.push(d);
      fps.push(fp);
    }
    offsets.push(docs.length);
    ndocs.push(new Set(l.map((e) => e[0])).size);
  }
  return {
    arena: { ids: Uint32Array.from(ids), offsets: Uint32Array.from(offsets), ndocs: Uint32Array.from(ndocs), docs: Uint32Array.from(docs), fps: Uint32Array.from(fps) },
    entries,
  };
}

function plain(a: ListArena): Record<number, [number, number][]> {
  const out: Record<number, [number, number][]> = {};
  a.ids.forEach((id, i) => {
    const l: [number, number][] = [];
    for (let e = a.offsets[i]!; e < a.offsets[i + 1]!; e++) l.push([a.docs[e]!, a.fps[e]!]);
    out[id] = l;
  });
  return out;
}

describe('mergeArenas', () => {
  for (const layout of ['end to end', 'interleaved'] as const) {
    it(`keeps every live entry in docid order, arenas ${layout}, clean or not`, async () => {
      const r = rng(layout === 'end to end' ? 11 : 12);
      for (let round = 0; round < 20; round++) {
        const k = 1 + Math.floor(r() * 4);
        const total = 50 + Math.floor(r() * 400);
        // Every docid belongs to one arena: consecutive ranges, or drawn at random.
        const owner = Array.from({ length: total }, (_, d) => (layout === 'end to end' ? Math.min(k - 1, Math.floor((d * k) / total)) : Math.floor(r() * k)));
        // Arenas listed newest first sometimes: their docid ranges need not ascend with the arena index.
        const order = r() < 0.5 ? [...Array(k).keys()] : [...Array(k).keys()].reverse();
        const built = order.map((a) => arenaOf(owner.flatMap((o, d) => (o === a ? [d] : [])), r, 30, round % 3 === 0 ? 40 : 3));
        // Every fourth round all clean: lists of several arenas are then copied when their docids do not interleave.
        const clean = built.map(() => round % 4 === 0 || r() < 0.5);
        const dead = new Set(Array.from({ length: total }, (_, d) => d).filter(() => r() < 0.2));
        const keep = (a: number, d: number) => clean[a]! || !dead.has(d);
        const merged = await mergeArenas(built.map((b) => b.arena), keep, clean, new Yielder(0));

        const expected: Record<number, [number, number][]> = {};
        built.forEach((b, a) => {
          for (const [id, l] of b.entries) for (const e of l) if (keep(a, e[0])) (expected[id] ??= []).push(e);
        });
        for (const l of Object.values(expected)) l.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
        expect(plain(merged)).toEqual(expected);
        merged.ids.forEach((id, i) => expect(merged.ndocs[i]).toBe(new Set(expected[id]!.map((e) => e[0])).size));
      }
    });
  }
});
