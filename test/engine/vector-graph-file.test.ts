import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AnnGraph, DEFAULT_ANN } from '../../src/engine/vector/ann-graph.js';
import { normalized } from '../../src/engine/vector/distance.js';
import { EmbedderState, type DocVectors } from '../../src/engine/vector/embedder-state.js';
import { loadSavedGraph, saveGraph, vectorHash, type GraphIdentity } from '../../src/engine/vector/graph-file.js';
import { VectorSlots } from '../../src/engine/vector/vector-slots.js';
import { tempDir } from '../helpers/node.js';

const dir = tempDir('trine-graph-file-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let seed = 5;
const rnd = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 4294967296 - 0.5);
const point = () => normalized(Float32Array.from({ length: 8 }, rnd));

describe('saved graph files', () => {
  const slots = new VectorSlots(8);
  for (let i = 0; i < 5000; i++) slots.append(i >> 1, point());
  slots.kill(7);
  const graph = new AnnGraph(slots);
  while (graph.size < slots.count) graph.insertNext();
  const id: GraphIdentity = { fingerprint: 'f1', dims: 8, quantized: false, params: DEFAULT_ANN };
  const hashes = async () => Uint32Array.from({ length: slots.count }, (_, i) => (slots.docOf[i]! >= 0 ? vectorHash(slots.vector(i)) : 0));

  it('read back what was saved, and the graph answers as before', async () => {
    // Not wanted any more once written (its index deleted meanwhile): nothing is left.
    await saveGraph(dir, 'g', id, (p) => graph.save(p), slots.docOf.slice(0, slots.count), hashes, async () => false);
    expect(readdirSync(dir)).toEqual([]);
    await saveGraph(dir, 'g', id, (p) => graph.save(p), slots.docOf.slice(0, slots.count), hashes, async () => true);
    const saved = (await loadSavedGraph(dir, 'g', id))!;
    expect(saved).not.toBeNull();
    expect([...saved.docOf]).toEqual([...slots.docOf.slice(0, slots.count)]);
    expect(saved.docOf[7]).toBe(-1);
    expect([...saved.hashes]).toEqual([...(await hashes())]);
    const back = AnnGraph.load(slots, saved.graphPath, slots.count);
    for (let q = 0; q < 20; q++) {
      const u = point();
      expect(back.nearest(u, 10)).toEqual(graph.nearest(u, 10));
    }
  });

  it('are refused when built for another embedder or configuration', async () => {
    for (const other of [
      { ...id, fingerprint: 'f2' },
      { ...id, dims: 9 },
      { ...id, quantized: true },
      { ...id, params: { ...DEFAULT_ANN, connectivity: 16 } },
    ]) {
      expect(await loadSavedGraph(dir, 'g', other)).toBeNull();
    }
    expect(await loadSavedGraph(dir, 'absent', id)).toBeNull();
  });

  it('are refused when torn or damaged', async () => {
    const slotsFile = join(dir, 'g.slots');
    const graphFile = join(dir, 'g.usearch');
    const good = { slots: readFileSync(slotsFile), graph: readFileSync(graphFile) };
    const flipped = (b: Buffer, at: number) => {
      const out = Buffer.from(b);
      out[at] ^= 0x10;
      return out;
    };
    const damages: [string, Buffer][] = [
      [slotsFile, good.slots.subarray(0, good.slots.length - 9)],
      [slotsFile, flipped(good.slots, good.slots.length - 100)],
      [graphFile, good.graph.subarray(0, good.graph.length - 1)],
      [graphFile, flipped(good.graph, good.graph.length >> 1)],
    ];
    for (const [file, bytes] of damages) {
      writeFileSync(file, bytes);
      expect(await loadSavedGraph(dir, 'g', id)).toBeNull();
      writeFileSync(slotsFile, good.slots);
      writeFileSync(graphFile, good.graph);
    }
    expect(await loadSavedGraph(dir, 'g', id)).not.toBeNull();
  });

  it('are used at open when most vectors are unchanged, and otherwise leave the slots packed', async () => {
    const meta = { fingerprint: 'f1', key: '', dims: 8, quantized: false };
    const vectors = Array.from({ length: 5000 }, () => point());
    const doc = (v: Float32Array): DocVectors => ({ userProvided: true, regenerate: false, textHash: null, vectors: [v] });
    const first = new EmbedderState('e', meta);
    vectors.forEach((v, d) => first.set(d, doc(v)));
    first.finishIndexing();
    const s = first.slots!;
    const hashesOf = async () => Uint32Array.from({ length: s.count }, (_, i) => vectorHash(s.vector(i)));
    await saveGraph(dir, 'e', id, (p) => first.graph!.save(p), s.docOf.slice(0, s.count), hashesOf, async () => true);
    const reopen = async (changed: number) => {
      const st = new EmbedderState('e', meta);
      const restore = st.restoreFrom((await loadSavedGraph(dir, 'e', id))!, 8);
      const later: number[] = [];
      vectors.forEach((v, d) => {
        const r = doc(d < changed ? point() : v);
        if (!restore.place(d, r)) later.push(d), st.set(d, r);
      });
      restore.finish();
      return { st, later };
    };
    const few = await reopen(1000);
    expect(few.later).toHaveLength(1000);
    expect(few.st.restoredVectors).toBe(4000);
    expect(few.st.graph!.size).toBe(5000);
    expect(few.st.slots!.count).toBe(6000);
    const most = await reopen(3000);
    expect(most.st.restoredVectors).toBe(0);
    expect(most.st.graph).toBeNull();
    // Packed as a load without a saved graph: no killed slot for a new graph to link.
    expect(most.st.slots!.count).toBe(5000);
    expect(most.st.slots!.live).toBe(5000);
    expect([...most.st.docs.values()].flatMap((e) => e.slots).sort((a, b) => a - b)).toEqual(Array.from({ length: 5000 }, (_, i) => i));
  });
});
