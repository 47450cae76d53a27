// The HNSW graph is saved beside the store once built, and a restarted node links only the
// vectors that changed since instead of every one. Saved files that no longer match are
// never served: a changed vector goes to a new slot, a damaged file is ignored.

import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CompositeIndex } from '../../src/engine/structures/composite-index.js';
import { VECTORS_PART, type VectorIndex } from '../../src/engine/vector/vector-index.js';
import { GRAPH_DIR } from '../../src/engine/vector/graph-file.js';
import type { EmbedderState } from '../../src/engine/vector/embedder-state.js';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.js';
import { call, cosine, write } from '../helpers/vector-api.js';
import { rng } from '../bench/wordnet.js';

const DIMS = 16;
const DOCS = 6000;
const dir = tempDir('trine-graph-');
const graphs = join(dir, GRAPH_DIR);
let t: TestNode;

afterAll(async () => {
  await t?.close();
});

const r = rng(11);
const vec = () => Array.from({ length: DIMS }, () => r() - 0.5);
/** The documents' vectors as the node should hold them. */
const vectors = new Map<number, number[]>();

function embedder(): EmbedderState {
  const part = (t.node.ctx.engine.getIndex('vec').search as CompositeIndex).part(VECTORS_PART) as VectorIndex;
  return part.embedders.get('manual')!;
}

async function put(docs: { id: number; v: number[] }[]): Promise<void> {
  for (const d of docs) vectors.set(d.id, d.v);
  await write(t, 'POST', '/indexes/vec/documents', docs.map((d) => ({ id: d.id, _vectors: { manual: d.v } })));
}

/** Each query's 10 nearest documents, from the node and by brute force over `vectors`. */
async function nearest(queries: number[][]): Promise<{ got: number[][]; exact: number[][] }> {
  const got: number[][] = [];
  const exact: number[][] = [];
  for (const q of queries) {
    const res = await call(t, 'POST', '/indexes/vec/search', { vector: q, hybrid: { embedder: 'manual', semanticRatio: 1 }, limit: 10 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    got.push((res.body['hits'] as { id: number }[]).map((h) => h.id));
    exact.push([...vectors].map(([id, v]) => [id, cosine(q, v)] as const).sort((a, b) => b[1] - a[1]).slice(0, 10).map(([id]) => id));
  }
  return { got, exact };
}

async function savedFiles(): Promise<string[]> {
  const end = Date.now() + 60_000;
  for (;;) {
    const files = existsSync(graphs) ? readdirSync(graphs).filter((f) => !f.endsWith('.tmp')) : [];
    if (files.length === 2) return files.sort();
    if (Date.now() > end) throw new Error(`no saved graph: ${files.join(', ')}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

async function restart(): Promise<void> {
  await t.close({ keepData: true });
  t = await startTestNode([], dir);
}

describe('saved vector graphs', () => {
  const queries = Array.from({ length: 12 }, vec);

  it('are saved once built and opened again without relinking, with the same answers', async () => {
    t = await startTestNode([], dir);
    await write(t, 'PATCH', '/indexes/vec/settings', { embedders: { manual: { source: 'userProvided', dimensions: DIMS } } });
    for (let from = 0; from < DOCS; from += 2000) await put(Array.from({ length: 2000 }, (_, k) => ({ id: from + k, v: vec() })));
    const files = await savedFiles();
    expect(files.map((f) => f.replace(/^.*\./, ''))).toEqual(['slots', 'usearch']);
    // The database's size on disk counts the saved graphs beside the store's files.
    const graphBytes = files.reduce((n, f) => n + statSync(join(graphs, f)).size, 0);
    expect(graphBytes).toBeGreaterThan(DOCS * DIMS * 4);
    const engine = t.node.ctx.engine;
    for (let tries = 0; ; tries++) {
      const before = await engine.store.diskSize();
      const total = await engine.diskSize();
      if (before === (await engine.store.diskSize())) {
        expect(total).toBe(before + graphBytes);
        break;
      }
      // The store's files changed meanwhile (a flush or a compaction): measure again.
      expect(tries).toBeLessThan(50);
      await new Promise((res) => setTimeout(res, 100));
    }
    expect(embedder().graph!.size).toBe(DOCS);
    const before = await nearest(queries);
    expect(before.got).toEqual(before.exact);

    await restart();
    // Linked at open, before any background step: nothing left to insert.
    expect(embedder().restoredVectors).toBe(DOCS);
    expect(embedder().graph!.size).toBe(DOCS);
    expect(embedder().graphPending()).toBe(0);
    expect((await nearest(queries)).got).toEqual(before.got);
  });

  it('put changed vectors in new slots and leave deleted documents out', async () => {
    const changed = Array.from({ length: 100 }, (_, k) => ({ id: k * 37, v: vec() }));
    await put(changed);
    const gone = Array.from({ length: 50 }, (_, k) => 5 + k * 41).filter((id) => !changed.some((c) => c.id === id));
    await write(t, 'POST', '/indexes/vec/documents/delete-batch', gone);
    for (const id of gone) vectors.delete(id);

    await restart();
    const st = embedder();
    // The graph saved before the changes (they were too few to save it again): their slots
    // in it stay killed, and the new vectors are appended to be linked in the background.
    expect(st.restoredVectors).toBe(DOCS - changed.length - gone.length);
    expect(st.slots!.count).toBe(DOCS + changed.length);
    expect(st.slots!.live).toBe(DOCS - gone.length);
    for (const c of changed) {
      expect(st.docs.get(c.id)!.slots[0]).toBeGreaterThanOrEqual(DOCS);
    }
    const after = await nearest([...queries, ...changed.slice(0, 5).map((c) => c.v)]);
    expect(after.got).toEqual(after.exact);
  });

  it('are ignored when damaged, and removed with their index', async () => {
    await t.close({ keepData: true });
    const file = join(graphs, readdirSync(graphs).find((f) => f.endsWith('.usearch'))!);
    const bytes = readFileSync(file);
    bytes[bytes.length >> 1] ^= 0x40;
    writeFileSync(file, bytes);
    t = await startTestNode([], dir);
    expect(embedder().restoredVectors).toBe(0);
    const after = await nearest(queries);
    expect(after.got).toEqual(after.exact);

    await write(t, 'DELETE', '/indexes/vec', undefined);
    await restart();
    expect(readdirSync(graphs)).toEqual([]);
  });
});
