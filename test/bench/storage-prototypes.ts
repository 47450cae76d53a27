// The two storage designs measured before the full-text index got its persisted form
// (docs/storage.md): `segments`, flat arrays written as checksummed blobs and read back whole
// into memory at open; `rocks`, one delta/varint-coded key per posting list read on demand
// through a cache. Both index the same `scale` corpus with the engine's own tokenizer; each
// phase runs in its own process so that its memory is its own.
//
//   node dist/test/bench/storage-prototypes.js <segments|rocks> <dir>   (build, then reopen)

import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { RocksStore } from '../../src/store/rocks-store.js';
import { extractRecord, Slab, type DocRecord } from '../../src/engine/fulltext/doc-record.js';
import { FieldNames, FieldRules } from '../../src/engine/fulltext/field-table.js';
import { WORD_LISTS, type Posting } from '../../src/engine/fulltext/postings.js';
import { buildArena, listAt, listOf, type ListArena } from '../../src/engine/fulltext/list-arena.js';
import { PrefixTable } from '../../src/engine/fulltext/prefix-table.js';
import { tokenizerFor } from '../../src/engine/fulltext/index-state.js';
import { WordTable } from '../../src/engine/fulltext/word-table.js';
import { Yielder } from '../../src/util/yielder.js';
import { defaultSettings } from '../../src/engine/settings/settings.js';
import { ScaleCorpus } from './scale-corpus.js';
import { rng } from './wordnet.js';

const N = Number(process.env['BENCH_DOCS'] ?? 1_000_000);
const BLOB = 8 << 20;

function rss(): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;
}
function peak(): number {
  return Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;
}

function pct(times: number[], p: number): number {
  const s = [...times].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

// ---- varint coding (rocks design) ----
class Out {
  buf = Buffer.allocUnsafe(1 << 16);
  at = 0;
  put(v: number): void {
    if (this.at + 5 > this.buf.length) {
      const b = Buffer.allocUnsafe(this.buf.length * 2);
      this.buf.copy(b, 0, 0, this.at);
      this.buf = b;
    }
    while (v >= 0x80) {
      this.buf[this.at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.at++] = v;
  }
  take(): Buffer {
    const b = Buffer.from(this.buf.subarray(0, this.at));
    this.at = 0;
    return b;
  }
}

/** docs as gaps, fps as gaps within a document (the first fp of a document whole). */
function encodePosting(p: Posting, o: Out): Buffer {
  o.put(p.docs.length);
  o.put(p.ndocs);
  let last = 0;
  let lastFp = 0;
  for (let i = 0; i < p.docs.length; i++) {
    const d = p.docs[i]!;
    const fp = p.fps[i]!;
    if (i === 0 || d !== last) {
      o.put(d - last);
      o.put(fp);
    } else {
      o.put(0);
      o.put(fp - lastFp);
    }
    last = d;
    lastFp = fp;
  }
  return o.take();
}

function decodePosting(b: Buffer): Posting {
  let at = 0;
  const get = (): number => {
    let v = 0;
    let s = 0;
    for (;;) {
      const x = b[at++]!;
      v += (x & 0x7f) * 2 ** s;
      if (x < 0x80) return v;
      s += 7;
    }
  };
  const n = get();
  const ndocs = get();
  const docs = new Uint32Array(n);
  const fps = new Uint32Array(n);
  let d = 0;
  let fp = 0;
  for (let i = 0; i < n; i++) {
    const gap = get();
    const f = get();
    if (i === 0 || gap !== 0) {
      d += gap;
      fp = f;
    } else fp += f;
    docs[i] = d;
    fps[i] = fp;
  }
  return { docs, fps, ndocs };
}

// ---- build ----
async function build(design: string, dir: string): Promise<void> {
  const corpus = new ScaleCorpus();
  const settings = defaultSettings();
  const names = new FieldNames();
  const words = new WordTable();
  const stage = words.stage();
  const ctx = { names, rules: new FieldRules(names, settings), tokenizer: tokenizerFor(settings), words: stage, keepValue: () => false, slab: new Slab() };
  const records: DocRecord[] = [];
  const t0 = performance.now();
  let tokens = 0;
  for (let i = 0; i < N; i++) {
    const r = extractRecord(corpus.doc(i) as unknown as Record<string, unknown>, ctx);
    records[i] = r;
    tokens += r.tokens.length / 2;
  }
  const tok = (performance.now() - t0) / 1000;
  const prefixes = new PrefixTable();
  const pstage = prefixes.stage(stage);
  pstage.sync();
  const t1 = performance.now();
  const y = new Yielder(1e9);
  const docids = Uint32Array.from(records.keys());
  const wl = await buildArena(docids, (i) => records[i]!, WORD_LISTS(stage.size), y);
  const pl = await buildArena(docids, (i) => records[i]!, pstage, y);
  const post = (performance.now() - t1) / 1000;
  const store = await RocksStore.open(dir);
  const t2 = performance.now();
  let wb = store.batch();
  let bytes = 0;
  const put = async (k: string, v: Buffer) => {
    wb.put(Buffer.from(k), v);
    bytes += v.length;
    if (bytes > 32 << 20) {
      await wb.commit();
      wb = store.batch();
      bytes = 0;
    }
  };
  const wordsJoined = Buffer.from(stage.added.join('\0'));
  await put('words', wordsJoined);
  let stored = wordsJoined.length;
  if (design === 'segments') {
    // The arenas as built: list ids, offsets and counts, docids and fps.
    for (const [kind, a] of [['w', wl], ['p', pl]] as const) {
      for (const [part, arr] of [['i', a.ids], ['o', a.offsets], ['n', a.ndocs], ['d', a.docs], ['f', a.fps]] as const) {
        const buf = Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength);
        for (let at = 0, c = 0; at < buf.length || c === 0; at += BLOB, c++) {
          const slice = buf.subarray(at, at + BLOB);
          const head = Buffer.alloc(8);
          head.writeUInt32LE(crc32(slice), 0);
          head.writeUInt32LE(buf.length, 4);
          await put(`s/${kind}/${part}/${String(c).padStart(6, '0')}`, Buffer.concat([head, slice]));
          stored += slice.length + 8;
        }
      }
    }
  } else {
    const o = new Out();
    for (const [kind, a] of [['w', wl], ['p', pl]] as const) {
      for (let i = 0; i < a.ids.length; i++) {
        const v = encodePosting(listAt(a, i), o);
        stored += v.length;
        await put(`r/${kind}/${String(a.ids[i]).padStart(8, '0')}`, v);
      }
    }
  }
  await wb.commit();
  const write = (performance.now() - t2) / 1000;
  await store.close();
  const disk = Number(execFileSync('du', ['-sb', dir]).toString().split('\t')[0]) / 2 ** 20;
  console.log(
    `${design} build: ${N} docs, ${tokens} tokens, ${stage.size} words, ${pstage.count} prefixes; tokenize ${tok.toFixed(1)} s (${Math.round(N / tok)} docs/s), ` +
      `postings ${post.toFixed(1)} s, write ${write.toFixed(1)} s; stored ${(stored / 2 ** 20).toFixed(0)} MiB, on disk ${disk.toFixed(0)} MiB; peak RSS ${peak().toFixed(0)} MiB`,
  );
}

// ---- open and query ----
async function reopen(design: string, dir: string): Promise<void> {
  const corpus = new ScaleCorpus();
  const base = rss();
  const t0 = performance.now();
  const store = await RocksStore.open(dir);
  const words = (await store.get(Buffer.from('words')))!.toString().split('\0');
  const ids = new Map<string, number>();
  words.forEach((w, i) => ids.set(w, i));
  const tWords = performance.now() - t0;
  const prefixIds = new Map<string, number>();
  {
    const pt = new PrefixTable();
    const ws = new WordTable(words).stage();
    const st = pt.stage(ws);
    st.sync();
    pt.commit(st);
    for (let i = 0; i < pt.keys.length; i++) prefixIds.set(pt.keys[i]!, i);
  }
  let list: (kind: 'w' | 'p', id: number) => Promise<Posting>;
  if (design === 'segments') {
    const arrays = new Map<string, Uint32Array>();
    const parts = new Map<string, Buffer[]>();
    for await (const { key, value } of store.scan({ prefix: Buffer.from('s/') })) {
      const k = key.toString().split('/');
      const name = `${k[1]}${k[2]}`;
      const body = value.subarray(8);
      if (crc32(body) !== value.readUInt32LE(0)) throw new Error(`corrupt blob ${key.toString()}`);
      let p = parts.get(name);
      if (!p) parts.set(name, (p = []));
      p.push(body);
    }
    for (const [name, p] of parts) {
      const total = p.reduce((n, b) => n + b.length, 0);
      const arr = new Uint32Array(total / 4);
      const bytes = new Uint8Array(arr.buffer);
      let at = 0;
      for (const b of p) {
        bytes.set(b, at);
        at += b.length;
      }
      arrays.set(name, arr);
    }
    const arena = (kind: string): ListArena => ({
      ids: arrays.get(`${kind}i`)!,
      offsets: arrays.get(`${kind}o`)!,
      ndocs: arrays.get(`${kind}n`)!,
      docs: arrays.get(`${kind}d`)!,
      fps: arrays.get(`${kind}f`)!,
    });
    const lists = { w: arena('w'), p: arena('p') };
    list = async (kind, id) => listOf(lists[kind], id);
  } else {
    // A cache of decoded lists bounded in entries (8 bytes each).
    const cache = new Map<string, Posting>();
    let cached = 0;
    const LIMIT = 16 << 20;
    list = async (kind, id) => {
      const k = `r/${kind}/${String(id).padStart(8, '0')}`;
      let p = cache.get(k);
      if (p) {
        cache.delete(k);
        cache.set(k, p);
        return p;
      }
      const v = await store.get(Buffer.from(k));
      p = v ? decodePosting(v) : { docs: new Uint32Array(0), fps: new Uint32Array(0), ndocs: 0 };
      cache.set(k, p);
      cached += p.docs.length;
      for (const [old, q] of cache) {
        if (cached <= LIMIT) break;
        cache.delete(old);
        cached -= q.docs.length;
      }
      return p;
    };
  }
  const open = performance.now() - t0;
  const opened = rss();
  const r = rng(7);
  const touch = (p: Posting) => {
    let n = 0;
    for (let i = 0, last = -1; i < p.docs.length; i++) if (p.docs[i] !== last) (last = p.docs[i]!), n++;
    return n;
  };
  const kinds: [string, string[][]][] = [
    ['exact word', Array.from({ length: 300 }, () => [corpus.definitionWords(Math.floor(r() * N), 1)])],
    ['1-letter prefix', Array.from({ length: 300 }, () => ['abcdefghijklmnopqrstuvwxyz'[Math.floor(r() * 26)]!])],
    ['2-letter prefix', Array.from({ length: 300 }, () => [corpus.definitionWords(Math.floor(r() * N), 1).slice(0, 2)])],
    ['three words', Array.from({ length: 300 }, () => corpus.definitionWords(Math.floor(r() * N), 3).split(' '))],
  ];
  const out: string[] = [];
  for (const [name, queries] of kinds) {
    const times: number[] = [];
    for (const q of queries) {
      const s = performance.now();
      for (const w of q) {
        const norm = w.toLowerCase();
        const p = name.includes('prefix') ? await list('p', prefixIds.get(norm) ?? 0) : await list('w', ids.get(norm) ?? 0);
        touch(p);
      }
      times.push(performance.now() - s);
    }
    out.push(`${name} p50 ${pct(times, 50).toFixed(2)} p95 ${pct(times, 95).toFixed(2)} ms`);
  }
  console.log(
    `${design} open: ${(open / 1000).toFixed(2)} s (word table ${(tWords / 1000).toFixed(2)} s), RSS after open ${opened.toFixed(0)} MiB ` +
      `(+${(opened - base).toFixed(0)} over the corpus process), after queries ${rss().toFixed(0)} MiB; posting reads: ${out.join('; ')}`,
  );
  await store.close();
}

async function main(): Promise<void> {
  const [design, dir, phase] = process.argv.slice(2);
  if (!design || !dir) throw new Error('usage: storage-prototypes <segments|rocks> <dir>');
  if (phase === 'build') return build(design, dir);
  if (phase === 'open') return reopen(design, dir);
  rmSync(dir, { recursive: true, force: true });
  for (const p of ['build', 'open']) execFileSync(process.execPath, ['--max-old-space-size=16384', process.argv[1]!, design, dir, p], { stdio: 'inherit' });
  rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
