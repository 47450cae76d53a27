// The `longdocs` benchmark: search speed on long documents. Each corpus of longdocs-corpus.ts
// (a dictionary of full articles, a software catalog with long descriptions) is imported over
// HTTP as NDJSON into a server running as its own process, then BENCH_QUERIES queries of each
// kind are sent one after another with `limit: 10`: one exact word, one misspelled word (a
// deletion, a swap or a vowel changed, never the first letter), a 1- or 2-letter prefix, and
// three consecutive words of one document; then the same queries again while the index is
// written to (one document replaced every WRITE_EVERY queries). MiniSearch (fuzzy 0.2,
// prefix) answers the first BENCH_MINI_QUERIES of each kind in this process on the same
// documents, for the ratio.
// Then the engine alone answers the same queries in this process, on the store the server left
// (once, then again), to tell its time from HTTP's and the machine's.
// BENCH_CORPORA picks corpora (dictionary,catalog); BENCH_IDS_OUT names a file that receives
// every query's ranked hit ids as JSON lines, so that two builds can be compared query by query.

import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import MiniSearch from 'minisearch';
import { Engine } from '../../src/engine/engine.js';
import { performSearch } from '../../src/engine/search/answer-query.js';
import { RocksStore } from '../../src/store/rocks-store.js';
import { spawnNode } from '../helpers/node.js';
import { diskSize, misspell, post, procStatus, timing, waitTask, type Timing } from './bench-util.js';
import { loadCatalog, loadDictionary, type LongCorpus, type LongDoc } from './longdocs-corpus.js';
import { pick, rng } from './wordnet.js';

const QUERIES = Number(process.env['BENCH_QUERIES'] ?? 400);
const MINI_QUERIES = Number(process.env['BENCH_MINI_QUERIES'] ?? 100);
const CORPORA = (process.env['BENCH_CORPORA'] ?? 'dictionary,catalog').split(',');
const IDS_OUT = process.env['BENCH_IDS_OUT'];
const BATCH = 20_000;
const TOP = 10;
/** Queries between two one-document writes in the pass while the index is written to. */
const WRITE_EVERY = 20;
/** The row of the pass while written to that times the writes themselves (POST to task succeeded). */
const WRITE_KIND = 'the write itself';

export interface Kind {
  name: string;
  queries: string[];
}

const words = (text: unknown): string[] => String(text ?? '').toLowerCase().match(/[a-z]+/g) ?? [];

/** The words a document is known by: its headword, or its package summary. */
function nameWords(c: LongCorpus, d: LongDoc): string[] {
  return words(d[c.name === 'dictionary' ? c.title : 'summary']);
}

export function queryKinds(c: LongCorpus): { kinds: Kind[]; intended: Map<string, string> } {
  const r = rng(20261126);
  const vocabulary = new Set<string>();
  for (const d of c.docs) for (const f of c.fields) for (const w of words(d[f])) vocabulary.add(w);
  const named = c.docs.filter((d) => nameWords(c, d).some((w) => w.length >= 4));
  const wordOf = (d: LongDoc, min: number): string | undefined => {
    const ws = nameWords(c, d).filter((w) => w.length >= min);
    return ws[Math.floor(r() * ws.length)];
  };
  const exact = pick(named, QUERIES, r).map((d) => wordOf(d, 4)!);
  // Misspellings the typo rules can reach (5 letters and more after the edit) that are not words
  // of the corpus themselves.
  const intended = new Map<string, string>();
  while (intended.size < QUERIES) {
    const w = wordOf(named[Math.floor(r() * named.length)]!, 6);
    if (w === undefined) continue;
    const m = misspell(w, r);
    if (m.length >= 5 && !vocabulary.has(m) && !intended.has(m)) intended.set(m, w);
  }
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  const prefixes = pick(named, QUERIES, r).map((d, i) => (i % 2 === 0 ? letters[Math.floor(r() * 26)]! : wordOf(d, 4)!.slice(0, 2)));
  const long = c.docs.filter((d) => words(d[c.body]).length >= 30);
  const three = pick(long, QUERIES, r).map((d) => {
    const ws = words(d[c.body]);
    const at = Math.floor(r() * (ws.length - 3));
    return ws.slice(at, at + 3).join(' ');
  });
  return {
    kinds: [
      { name: 'exact word', queries: exact },
      { name: 'misspelling', queries: [...intended.keys()] },
      { name: 'prefix 1-2 letters', queries: prefixes },
      { name: 'three words', queries: three },
    ],
    intended,
  };
}

interface Measured {
  timings: Map<string, Timing>;
  /** The same queries over HTTP with one document replaced every WRITE_EVERY queries. */
  written?: Map<string, Timing>;
  /** Trine's queries answered by the engine in this process, on the store the server left. */
  engine?: Map<string, { once: Timing; warm: Timing }>;
  hits: number;
  asked: number;
}

/**
 * Each kind's queries answered by the engine opened in this process on the store the server
 * closed: once, as over HTTP, then again (its per-state caches warm). What the engine costs,
 * apart from HTTP, the client and the other process sharing the machine's two cores.
 */
async function measureEngine(dir: string, c: LongCorpus, kinds: Kind[]): Promise<NonNullable<Measured['engine']>> {
  const store = await RocksStore.open(dir);
  try {
    const engine = await Engine.open(store);
    const out: NonNullable<Measured['engine']> = new Map();
    for (const k of kinds) {
      const once: number[] = [];
      const warm: number[] = [];
      for (const pass of [once, warm]) {
        for (const q of k.queries) {
          const s = performance.now();
          await performSearch(engine, c.name, { q, limit: TOP }, { includeMetadata: false });
          pass.push(performance.now() - s);
        }
      }
      out.set(k.name, { once: timing(once), warm: timing(warm) });
    }
    return out;
  } finally {
    await store.close();
  }
}

async function measureTrine(c: LongCorpus, kinds: Kind[], intended: Map<string, string>): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), 'trine-bench-longdocs-'));
  const node = await spawnNode(['--log-level', 'error'], dir);
  const url = node.url;
  const index = c.name;
  const timings = new Map<string, Timing>();
  const written = new Map<string, Timing>();
  let engine: NonNullable<Measured['engine']> = new Map();
  let hits = 0;
  try {
    const settings = await fetch(`${url}/indexes/${index}/settings`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ searchableAttributes: c.fields }),
    });
    await waitTask(url, ((await settings.json()) as { taskUid: number }).taskUid);
    const t0 = performance.now();
    let last = 0;
    for (let i = 0; i < c.docs.length; i += BATCH) {
      const body = c.docs.slice(i, i + BATCH).map((d) => JSON.stringify(d)).join('\n');
      const res = await post(url, `/indexes/${index}/documents?primaryKey=id`, body, 'application/x-ndjson');
      last = ((await res.json()) as { taskUid: number }).taskUid;
    }
    await waitTask(url, last);
    const importS = (performance.now() - t0) / 1000;
    console.log(
      `  Trine import: ${(importS).toFixed(1)} s (${Math.round(c.docs.length / importS)} docs/s), ` +
        `peak RSS ${(procStatus(node.proc.pid!, 'VmHWM') / 2 ** 20).toFixed(0)} MiB, on disk ${(diskSize(dir) / 2 ** 20).toFixed(0)} MiB`,
    );
    for (const q of ['warm', 'up', 'a', 'the quick brown']) await (await post(url, `/indexes/${index}/search`, { q })).arrayBuffer();
    for (const k of kinds) {
      const times: number[] = [];
      for (const q of k.queries) {
        const s = performance.now();
        const r = await post(url, `/indexes/${index}/search`, { q, limit: TOP });
        const body = (await r.json()) as { hits: LongDoc[] };
        times.push(performance.now() - s);
        if (r.status !== 200) throw new Error(`${k.name} "${q}": ${r.status} ${JSON.stringify(body)}`);
        if (k.name === 'misspelling' && body.hits.some((h) => nameWords(c, h).includes(intended.get(q)!))) hits++;
        if (IDS_OUT !== undefined) appendFileSync(IDS_OUT, JSON.stringify({ corpus: c.name, kind: k.name, q, ids: body.hits.map((h) => h.id) }) + '\n');
      }
      timings.set(k.name, timing(times));
    }
    // Each write publishes a new state: searches after it must not start from nothing.
    let edits = 0;
    const writes: number[] = [];
    for (const k of kinds) {
      const times: number[] = [];
      for (const [i, q] of k.queries.entries()) {
        if (i % WRITE_EVERY === 0) {
          const d = c.docs[(edits++ * 7919) % c.docs.length]!;
          const s = performance.now();
          const res = await post(url, `/indexes/${index}/documents`, [{ ...d, [c.body]: `${String(d[c.body] ?? '')} (revised)` }]);
          await waitTask(url, ((await res.json()) as { taskUid: number }).taskUid, 5);
          writes.push(performance.now() - s);
        }
        const s = performance.now();
        const r = await post(url, `/indexes/${index}/search`, { q, limit: TOP });
        await r.arrayBuffer();
        times.push(performance.now() - s);
      }
      written.set(k.name, timing(times));
    }
    written.set(WRITE_KIND, timing(writes));
    await node.kill('SIGTERM');
    engine = await measureEngine(dir, c, kinds);
  } finally {
    await node.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
  return { timings, written, engine, hits, asked: intended.size };
}

function measureMiniSearch(c: LongCorpus, kinds: Kind[], intended: Map<string, string>): Measured {
  const mini = new MiniSearch<LongDoc>({
    fields: c.fields,
    storeFields: c.fields,
    searchOptions: { fuzzy: 0.2, prefix: true, boost: { [c.title]: 3 } },
  });
  const m0 = performance.now();
  mini.addAll(c.docs);
  console.log(`  MiniSearch in-process build: ${((performance.now() - m0) / 1000).toFixed(1)} s`);
  const timings = new Map<string, Timing>();
  let hits = 0;
  let asked = 0;
  for (const k of kinds) {
    const times: number[] = [];
    for (const q of k.queries.slice(0, MINI_QUERIES)) {
      const s = performance.now();
      const found = mini.search(q).slice(0, TOP);
      times.push(performance.now() - s);
      if (k.name !== 'misspelling') continue;
      asked++;
      if (found.some((h) => nameWords(c, h as unknown as LongDoc).includes(intended.get(q)!))) hits++;
    }
    timings.set(k.name, timing(times));
  }
  return { timings, hits, asked };
}

export async function runLongDocsBench(): Promise<void> {
  if (IDS_OUT !== undefined) writeFileSync(IDS_OUT, '');
  for (const which of CORPORA) {
    const c = which === 'dictionary' ? loadDictionary() : which === 'catalog' ? await loadCatalog() : undefined;
    if (c === undefined) throw new Error(`unknown corpus \`${which}\`; corpora: dictionary, catalog`);
    const lengths = c.docs.map((d) => c.fields.reduce((n, f) => n + words(d[f]).length, 0)).sort((a, b) => a - b);
    console.log(
      `corpus ${c.name}: ${c.docs.length} documents, words per document p50 ${lengths[lengths.length >> 1]}, ` +
        `p90 ${lengths[Math.floor(lengths.length * 0.9)]}; ${QUERIES} queries per kind (MiniSearch: the first ${MINI_QUERIES})`,
    );
    const { kinds, intended } = queryKinds(c);
    const trine = await measureTrine(c, kinds, intended);
    const mini = measureMiniSearch(c, kinds, intended);
    const f = (n: number) => n.toFixed(2).padStart(8);
    console.log(`  ${'kind'.padEnd(20)} ${'Trine HTTP p50'.padStart(14)} ${'p95'.padStart(8)} ${'p99'.padStart(8)}   ${'MiniSearch p50'.padStart(14)} ${'p95'.padStart(8)} ${'p99'.padStart(8)}   target p95 ≤ 10 ms`);
    for (const k of kinds) {
      const a = trine.timings.get(k.name)!;
      const b = mini.timings.get(k.name)!;
      console.log(
        `  ${k.name.padEnd(20)} ${f(a.p50).padStart(14)} ${f(a.p95)} ${f(a.p99)}   ${f(b.p50).padStart(14)} ${f(b.p95)} ${f(b.p99)}   ${a.p95 <= 10 ? 'ok' : 'MISSED'}`,
      );
    }
    console.log(`  over HTTP while written to: one document replaced (and its task awaited) every ${WRITE_EVERY} queries`);
    for (const name of [...kinds.map((k) => k.name), WRITE_KIND]) {
      const w = trine.written?.get(name);
      if (w) console.log(`  ${name.padEnd(20)} ${f(w.p50).padStart(14)} ${f(w.p95)} ${f(w.p99)}`);
    }
    console.log(`  engine alone, in this process on the same store (no HTTP): each query once, then again`);
    for (const k of kinds) {
      const e = trine.engine?.get(k.name);
      if (e) console.log(`  ${k.name.padEnd(20)} once ${f(e.once.p50)} ${f(e.once.p95)} ${f(e.once.p99)}   again ${f(e.warm.p50)} ${f(e.warm.p95)} ${f(e.warm.p99)}`);
    }
    const rate = (m: Measured) => `${((100 * m.hits) / m.asked).toFixed(1)}%`;
    console.log(`  misspelling hit rate (intended word among the top ${TOP}): Trine ${rate(trine)}, MiniSearch ${rate(mini)} (of its ${mini.asked})\n`);
  }
}
