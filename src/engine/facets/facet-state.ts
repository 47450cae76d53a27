import type { KvReader } from '../../store/kv.js';
import { prefixEnd } from '../../store/keys.js';
import { Bitmap, EMPTY } from './bitmap.js';
import { decodeDocids, decodeSpellings, type FacetKeys } from './codec.js';
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
      this.fields.set(name, f);
      this.fieldNames.push(name);
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

  /** Reads a persisted facet index. */
  static async load(reader: KvReader, keys: FacetKeys, config: FacetConfig): Promise<FacetState> {
    const st = new FacetState(config);
    const meta = await reader.get(keys.meta);
    if (!meta) return st;
    for (const name of (JSON.parse(meta.toString()) as { fields: string[] }).fields) st.fieldOrCreate(name);
    const scan = (kind: string) => {
      const prefix = keys.kindPrefix(kind);
      return reader.scan({ gte: prefix, lt: prefixEnd(prefix) });
    };

    const allParts: Uint32Array[] = [];
    for await (const e of scan('A')) allParts.push(decodeDocids(e.value));
    st.all = allParts.length ? concat(allParts) : EMPTY;

    for (const kind of ['E', 'Z', 'Y'] as const) {
      const parts = new Map<number, Uint32Array[]>();
      for await (const e of scan(kind)) {
        const { fid } = keys.parsePosting(e.key);
        let list = parts.get(fid);
        if (!list) parts.set(fid, (list = []));
        list.push(decodeDocids(e.value));
      }
      for (const [fid, list] of parts) {
        const f = st.fields.get(st.fieldNames[fid]!)!;
        const docids = concat(list);
        if (kind === 'E') f.exists = docids;
        else if (kind === 'Z') f.nulls = docids;
        else f.empties = docids;
      }
    }

    const numbers = new Map<FieldFacets, Map<number, Uint32Array[]>>();
    for await (const e of scan('N')) {
      const { fid, value } = keys.parsePosting(e.key);
      const f = st.fields.get(st.fieldNames[fid]!)!;
      let m = numbers.get(f);
      if (!m) numbers.set(f, (m = new Map()));
      const n = value as number;
      let list = m.get(n);
      if (!list) m.set(n, (list = []));
      list.push(decodeDocids(e.value));
    }
    for (const [f, m] of numbers) for (const [n, list] of m) f.numbers.set(n, concat(list));

    const strings = new Map<FieldFacets, Map<string, Map<string, Uint32Array[]>>>();
    for await (const e of scan('O')) {
      const { fid, value } = keys.parsePosting(e.key);
      const f = st.fields.get(st.fieldNames[fid]!)!;
      let m = strings.get(f);
      if (!m) strings.set(f, (m = new Map()));
      let sp = m.get(value as string);
      if (!sp) m.set(value as string, (sp = new Map()));
      for (const [orig, docids] of decodeSpellings(e.value)) {
        let list = sp.get(orig);
        if (!list) sp.set(orig, (list = []));
        list.push(docids);
      }
    }
    for (const [f, m] of strings) {
      for (const [key, sp] of m) {
        const spellings = new Map([...sp].map(([o, list]) => [o, concat(list)] as const));
        const v: StringValue = { key, spellings, docids: unionOf(spellings) };
        f.strings.set(key, v);
      }
    }

    for await (const e of scan('G')) {
      st.geo.points.set(keys.docidOf(e.key), [e.value.readDoubleBE(0), e.value.readDoubleBE(8)]);
    }
    for await (const e of scan('J')) {
      const shape = parseShape(JSON.parse(e.value.toString()));
      if (shape) st.shapes.set(keys.docidOf(e.key), shape);
    }
    return st;
  }
}

export function encodePoint(lat: number, lng: number): Buffer {
  const b = Buffer.allocUnsafe(16);
  b.writeDoubleBE(lat, 0);
  b.writeDoubleBE(lng, 8);
  return b;
}
