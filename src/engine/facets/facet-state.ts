import type { KvReader } from '../../store/kv.js';
import { prefixEnd } from '../../store/keys.js';
import { Bitmap, EMPTY, lowerBound, sortedUniqueNumbers } from './bitmap.js';
import { CHUNK_BITS, chunkSlice, chunksOfPosting, decodeDocids, Reader, Writer, type FacetKeys } from './codec.js';
import type { FacetConfig } from './extract.js';
import { FieldFacets, type StringValue } from './field-facets.js';
import { GeoPoints } from './geo.js';
import { parseShape, type Shape } from './geojson.js';

function concat(parts: Uint32Array[]): Uint32Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Union of a string value's spellings (documents may use several spellings of one value). */
export function unionOf(spellings: Map<string, Uint32Array>): Uint32Array {
  if (spellings.size === 1) return spellings.values().next().value!;
  const all: number[] = [];
  for (const d of spellings.values()) for (const x of d) all.push(x);
  const arr = Uint32Array.from(all).sort();
  let n = 0;
  for (let i = 0; i < arr.length; i++) if (i === 0 || arr[i] !== arr[i - 1]) arr[n++] = arr[i]!;
  return arr.slice(0, n);
}

/** Per chunk, the keys whose postings have documents in it. */
function chunkLists<K>(postings: Iterable<[K, Uint32Array]>): Map<number, K[]> {
  const out = new Map<number, K[]>();
  for (const [k, d] of postings) {
    for (const c of chunksOfPosting(d)) {
      let list = out.get(c);
      if (!list) out.set(c, (list = []));
      list.push(k);
    }
  }
  return out;
}

/** A chunk's record of numbers: each number of the chunk with its documents there. */
export function numberSegment(values: Iterable<number>, posting: (n: number) => Uint32Array | undefined, chunk: number): Buffer | null {
  const w = new Writer();
  let n = 0;
  for (const v of values) {
    const d = chunkSlice(posting(v) ?? EMPTY, chunk);
    if (d.length === 0) continue;
    w.f64(v).docids(d);
    n++;
  }
  return n > 0 ? w.done() : null;
}

/** A chunk's record of strings: each normalized value with its spellings' documents there. */
export function stringSegment(keys: Iterable<string>, value: (k: string) => StringValue | null | undefined, chunk: number): Buffer | null {
  const w = new Writer();
  let n = 0;
  for (const k of keys) {
    const v = value(k);
    if (!v) continue;
    const groups = [...v.spellings].map(([o, d]) => [o, chunkSlice(d, chunk)] as const).filter(([, d]) => d.length > 0);
    if (groups.length === 0) continue;
    w.str(k).u32(groups.length);
    for (const [o, d] of groups) w.str(o).docids(d);
    n++;
  }
  return n > 0 ? w.done() : null;
}

/** A chunk's `_geo` points. */
export function geoSegment(points: (docid: number) => [number, number] | null | undefined, chunk: number): Buffer | null {
  const w = new Writer();
  let n = 0;
  const from = chunk * (1 << CHUNK_BITS);
  for (let d = from; d < from + (1 << CHUNK_BITS); d++) {
    const p = points(d);
    if (!p) continue;
    w.u32(d).f64(p[0]).f64(p[1]);
    n++;
  }
  return n > 0 ? w.done() : null;
}

interface ChunkRecord {
  chunk: number;
  value: Buffer;
}

/**
 * A field's numbers from its chunk records, read in two passes: the first lists each
 * (number, chunk) pair, the second copies the docids into one array laid out in ascending
 * number order. The postings are views into that array, which is also the field's number
 * runs, so a large index opens without one small array per number and chunk (a million at a
 * million documents with distinct prices), without a hash lookup per pair, and its first
 * range filter or sort has nothing left to build.
 */
function loadNumbers(f: FieldFacets, records: ChunkRecord[]): void {
  let pairs = 0;
  for (const { value } of records) for (let at = 0; at < value.length; pairs++) at += 12 + value.readUInt32LE(at + 8) * 4;
  const values = new Float64Array(pairs);
  const lengths = new Uint32Array(pairs);
  let j = 0;
  for (const { chunk, value } of records) {
    const first = j;
    for (let at = 0; at < value.length; j++) {
      values[j] = value.readDoubleLE(at);
      lengths[j] = value.readUInt32LE(at + 8);
      at += 12 + lengths[j]! * 4;
    }
    f.numberChunks.set(chunk, values.subarray(first, j));
  }
  const keys = sortedUniqueNumbers(values.slice()).slice(); // kept as the field's sorted keys: not a view of every pair
  const distinct = keys.length;
  const ranks = new Uint32Array(pairs);
  const offsets = new Uint32Array(distinct + 1);
  for (let i = 0; i < pairs; i++) offsets[(ranks[i] = lowerBound(keys, values[i]!)) + 1] += lengths[i]!;
  for (let r = 0; r < distinct; r++) offsets[r + 1] += offsets[r]!;
  const next = offsets.slice(0, distinct);
  const docids = new Uint32Array(offsets[distinct]!);
  j = 0;
  for (const { value } of records) {
    for (let at = 0; at < value.length; j++) {
      const r = ranks[j]!;
      let to = next[r]!;
      for (let p = at + 12, end = p + lengths[j]! * 4; p < end; p += 4) docids[to++] = value.readUInt32LE(p);
      next[r] = to;
      at += 12 + lengths[j]! * 4;
    }
  }
  for (let r = 0; r < distinct; r++) f.numbers.set(keys[r]!, docids.subarray(offsets[r], offsets[r + 1]));
  f.loadedNumbers(keys, { offsets, docids });
}

/** Everything the facet index knows about an index, as searches read it. */
export class FacetState {
  readonly fields = new Map<string, FieldFacets>();
  readonly fieldNames: string[] = [];
  all: Uint32Array = EMPTY;
  readonly geo = new GeoPoints();
  readonly shapes = new Map<number, Shape>();
  /** Bumped on every published change; caches key on it. */
  version = 0;
  private universeCache: { version: number; bitmap: Bitmap } | null = null;

  constructor(public config: FacetConfig) {}

  field(name: string): FieldFacets | undefined {
    return this.fields.get(name);
  }

  register(f: FieldFacets): void {
    this.fields.set(f.name, f);
    this.fieldNames[f.id] = f.name;
  }

  fieldOrCreate(name: string): FieldFacets {
    let f = this.fields.get(name);
    if (!f) {
      f = new FieldFacets(name, this.fieldNames.length);
      this.register(f);
    }
    return f;
  }

  /** One past the highest docid: the size bitmaps over this index need. */
  capacity(): number {
    return this.all.length > 0 ? this.all[this.all.length - 1]! + 1 : 0;
  }

  /** Every document, as a bitmap the caller must not modify. */
  universe(): Bitmap {
    if (this.universeCache?.version !== this.version) {
      this.universeCache = { version: this.version, bitmap: Bitmap.of(this.all, this.capacity()) };
    }
    return this.universeCache.bitmap;
  }

  /** Fills the chunk lists of every field from its postings (after a full build). */
  indexChunks(): void {
    for (const f of this.fields.values()) {
      for (const [c, list] of chunkLists(f.numbers)) f.numberChunks.set(c, list);
      for (const [c, list] of chunkLists([...f.strings].map(([k, v]) => [k, v.docids] as [string, Uint32Array]))) f.stringChunks.set(c, list);
    }
  }

  /** Reads a persisted facet index: records come in chunk order, so postings concatenate in docid order. */
  static async load(reader: KvReader, keys: FacetKeys, config: FacetConfig): Promise<FacetState> {
    const st = new FacetState(config);
    const meta = await reader.get(keys.meta);
    if (!meta) return st;
    for (const name of (JSON.parse(meta.toString()) as { fields: string[] }).fields) st.fieldOrCreate(name);
    const scan = (kind: string) => {
      const prefix = keys.kindPrefix(kind);
      return reader.scan({ gte: prefix, lt: prefixEnd(prefix) });
    };
    const fieldOf = (key: Buffer) => st.fields.get(st.fieldNames[keys.fieldOf(key)]!)!;

    const allParts: Uint32Array[] = [];
    for await (const e of scan('A')) allParts.push(decodeDocids(e.value));
    st.all = allParts.length ? concat(allParts) : EMPTY;

    for (const kind of ['E', 'Z', 'Y'] as const) {
      const parts = new Map<FieldFacets, Uint32Array[]>();
      for await (const e of scan(kind)) {
        const f = fieldOf(e.key);
        let list = parts.get(f);
        if (!list) parts.set(f, (list = []));
        list.push(decodeDocids(e.value));
      }
      for (const [f, list] of parts) {
        if (kind === 'E') f.exists = concat(list);
        else if (kind === 'Z') f.nulls = concat(list);
        else f.empties = concat(list);
      }
    }

    const numberRecords = new Map<FieldFacets, ChunkRecord[]>();
    for await (const e of scan('N')) {
      const f = fieldOf(e.key);
      let list = numberRecords.get(f);
      if (!list) numberRecords.set(f, (list = []));
      list.push({ chunk: e.key.readUInt32BE(e.key.length - 4), value: e.value });
    }
    for (const [f, records] of numberRecords) loadNumbers(f, records);

    const strings = new Map<FieldFacets, Map<string, Map<string, Uint32Array[]>>>();
    for await (const e of scan('S')) {
      const f = fieldOf(e.key);
      const chunk = e.key.readUInt32BE(e.key.length - 4);
      let m = strings.get(f);
      if (!m) strings.set(f, (m = new Map()));
      const inChunk: string[] = [];
      for (const r = new Reader(e.value); r.more; ) {
        const key = r.str();
        inChunk.push(key);
        let sp = m.get(key);
        if (!sp) m.set(key, (sp = new Map()));
        for (let i = r.u32(); i > 0; i--) {
          const orig = r.str();
          let list = sp.get(orig);
          if (!list) sp.set(orig, (list = []));
          list.push(r.docids());
        }
      }
      f.stringChunks.set(chunk, inChunk);
    }
    for (const [f, m] of strings) {
      for (const [key, sp] of m) {
        const spellings = new Map([...sp].map(([o, list]) => [o, concat(list)] as const));
        f.strings.set(key, { key, spellings, docids: unionOf(spellings) });
      }
    }

    for await (const e of scan('G')) {
      for (const r = new Reader(e.value); r.more; ) {
        const d = r.u32();
        st.geo.points.set(d, [r.f64(), r.f64()]);
      }
    }
    for await (const e of scan('J')) {
      const shape = parseShape(JSON.parse(e.value.toString()));
      if (shape) st.shapes.set(keys.docidOf(e.key), shape);
    }
    return st;
  }
}
