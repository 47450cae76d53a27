import type { KvReader } from '../../store/kv.js';
import { prefixEnd } from '../../store/keys.js';
import { Bitmap, EMPTY } from './bitmap.js';
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

function addTo<K>(m: Map<number, Set<K>>, chunk: number, key: K): void {
  let s = m.get(chunk);
  if (!s) m.set(chunk, (s = new Set()));
  s.add(key);
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
      for (const [n, d] of f.numbers) for (const c of chunksOfPosting(d)) addTo(f.numberChunks, c, n);
      for (const [k, v] of f.strings) for (const c of chunksOfPosting(v.docids)) addTo(f.stringChunks, c, k);
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

    const numbers = new Map<FieldFacets, Map<number, Uint32Array[]>>();
    for await (const e of scan('N')) {
      const f = fieldOf(e.key);
      const chunk = e.key.readUInt32BE(e.key.length - 4);
      let m = numbers.get(f);
      if (!m) numbers.set(f, (m = new Map()));
      for (const r = new Reader(e.value); r.more; ) {
        const n = r.f64();
        let list = m.get(n);
        if (!list) m.set(n, (list = []));
        list.push(r.docids());
        addTo(f.numberChunks, chunk, n);
      }
    }
    for (const [f, m] of numbers) for (const [n, list] of m) f.numbers.set(n, concat(list));

    const strings = new Map<FieldFacets, Map<string, Map<string, Uint32Array[]>>>();
    for await (const e of scan('S')) {
      const f = fieldOf(e.key);
      const chunk = e.key.readUInt32BE(e.key.length - 4);
      let m = strings.get(f);
      if (!m) strings.set(f, (m = new Map()));
      for (const r = new Reader(e.value); r.more; ) {
        const key = r.str();
        let sp = m.get(key);
        if (!sp) m.set(key, (sp = new Map()));
        for (let i = r.u32(); i > 0; i--) {
          const orig = r.str();
          let list = sp.get(orig);
          if (!list) sp.set(orig, (list = []));
          list.push(r.docids());
        }
        addTo(f.stringChunks, chunk, key);
      }
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
