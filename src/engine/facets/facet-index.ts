import type { KvStore, WriteBatch } from '../../store/kv.js';
import type { Doc } from '../documents/primary-key.js';
import type { DocChange, PreparedIndexUpdate, SearchIndex, SearchIndexContext, SearchIndexFactory } from '../search-index.js';
import type { IndexSettings } from '../settings/settings.js';
import { applyDelta, EMPTY, sortedUnique } from './bitmap.js';
import { chunkOf, chunkSlice, encodeDocids, encodeSpellings, FacetKeys, type PostingKind } from './codec.js';
import {
  extractFacets, extractGeoPoint, facetConfigOf, facetKey, facetSelector, geoEnabled, geojsonEnabled, GEOJSON_FIELD,
  sameFacetConfig, type FacetConfig,
} from './extract.js';
import { encodePoint, FacetState, unionOf } from './facet-state.js';
import { FieldFacets, type StringValue } from './field-facets.js';
import { parseShape } from './geojson.js';

interface Delta {
  add: number[];
  del: number[];
}

/** A document's facet facts per field, as `kind + value` strings so two versions diff cheaply. */
type DocFacts = Map<string, Set<string>>;

interface DocGeo {
  point: [number, number] | null;
  geojson: string | null;
}

/** New content of one field's postings, computed before the batch commits. */
interface FieldUpdate {
  field: FieldFacets;
  sets: Partial<Record<'E' | 'Z' | 'Y', Uint32Array>>;
  numbers: Map<number, Uint32Array>;
  strings: Map<string, StringValue | null>;
  /** Chunks each posting must be rewritten in, keyed like `E`, `N<number>`, `O<key>`. */
  chunks: Map<string, Set<number>>;
}

function deltaOf(m: Map<string, Delta>, key: string): Delta {
  let d = m.get(key);
  if (!d) m.set(key, (d = { add: [], del: [] }));
  return d;
}

function chunksOf(d: Delta, into = new Set<number>()): Set<number> {
  for (const x of d.add) into.add(chunkOf(x));
  for (const x of d.del) into.add(chunkOf(x));
  return into;
}

/**
 * The `facets` part of an index's search structures: per field, docids per value, plus
 * `_geo` points and `_geojson` shapes. It lives in memory and in the store; the store is
 * only read when the index is opened.
 */
export class FacetIndex implements SearchIndex {
  private readonly keys: FacetKeys;

  private constructor(
    private readonly store: KvStore,
    ctx: SearchIndexContext,
    public state: FacetState,
  ) {
    this.keys = new FacetKeys(ctx.space);
  }

  static async open(ctx: SearchIndexContext): Promise<FacetIndex> {
    const state = await FacetState.load(ctx.store, new FacetKeys(ctx.space), facetConfigOf(ctx.settings));
    return new FacetIndex(ctx.store, ctx, state);
  }

  private facts(doc: Doc, config: FacetConfig, select: ReturnType<typeof facetSelector>): { facts: DocFacts; geo: DocGeo } {
    const facts: DocFacts = new Map();
    const add = (field: string, fact: string) => {
      let s = facts.get(field);
      if (!s) facts.set(field, (s = new Set()));
      s.add(fact);
    };
    extractFacets(doc, select, (field, kind, value) => add(field, value === null ? kind : kind + String(value)));
    let point: [number, number] | null = null;
    if (geoEnabled(config)) {
      point = extractGeoPoint(doc);
      if (point) {
        add('_geo.lat', 'e');
        add('_geo.lat', 'n' + String(point[0]));
        add('_geo.lng', 'e');
        add('_geo.lng', 'n' + String(point[1]));
      }
    }
    const gj = geojsonEnabled(config) && doc[GEOJSON_FIELD] !== undefined ? JSON.stringify(doc[GEOJSON_FIELD]) : null;
    return { facts, geo: { point, geojson: gj } };
  }

  async prepare(changes: readonly DocChange[], settings: IndexSettings, opts?: { reset?: boolean }): Promise<PreparedIndexUpdate> {
    const config = facetConfigOf(settings);
    if (opts?.reset) {
      const docs = changes.filter((c) => c.after).map((c) => [c.docid, c.after!] as [number, Doc]);
      return this.fullBuild(docs, config);
    }
    const select = facetSelector(config);
    const perField = new Map<string, Map<string, Delta>>();
    const all: Delta = { add: [], del: [] };
    const geo = new Map<number, [number, number] | null>();
    const shapes = new Map<number, string | null>();
    for (const { docid, before, after } of changes) {
      const b = before ? this.facts(before, config, select) : null;
      const a = after ? this.facts(after, config, select) : null;
      if (!b && a) all.add.push(docid);
      if (b && !a) all.del.push(docid);
      const fields = new Set([...(b?.facts.keys() ?? []), ...(a?.facts.keys() ?? [])]);
      for (const field of fields) {
        const was = b?.facts.get(field);
        const now = a?.facts.get(field);
        let m = perField.get(field);
        for (const f of was ?? []) {
          if (now?.has(f)) continue;
          if (!m) perField.set(field, (m = new Map()));
          deltaOf(m, f).del.push(docid);
        }
        for (const f of now ?? []) {
          if (was?.has(f)) continue;
          if (!m) perField.set(field, (m = new Map()));
          deltaOf(m, f).add.push(docid);
        }
      }
      const bp = b?.geo.point ?? null;
      const ap = a?.geo.point ?? null;
      if (bp?.[0] !== ap?.[0] || bp?.[1] !== ap?.[1]) geo.set(docid, ap);
      if ((b?.geo.geojson ?? null) !== (a?.geo.geojson ?? null)) shapes.set(docid, a?.geo.geojson ?? null);
    }

    // Fields met for the first time get ids now but become visible only on publish.
    const newFields: FieldFacets[] = [];
    const updates: FieldUpdate[] = [];
    for (const [name, deltas] of perField) {
      let field = this.state.field(name);
      if (!field) {
        field = new FieldFacets(name, this.state.fieldNames.length + newFields.length);
        newFields.push(field);
      }
      updates.push(this.fieldUpdate(field, deltas));
    }
    const sortDelta = (d: Delta) => ({ add: sortedUnique(d.add), del: sortedUnique(d.del) });
    const allSorted = sortDelta(all);
    const newAll = applyDelta(this.state.all, allSorted.add, allSorted.del);
    const allChunks = chunksOf(all);
    const keys = this.keys;
    const state = this.state;
    return {
      write: (wb) => {
        if (newFields.length > 0) wb.put(keys.meta, JSON.stringify({ fields: [...state.fieldNames, ...newFields.map((f) => f.name)] }));
        for (const c of allChunks) putChunk(wb, keys.all(c), chunkSlice(newAll, c));
        for (const u of updates) this.writeField(wb, u);
        for (const [docid, p] of geo) {
          if (p) wb.put(keys.geo(docid), encodePoint(p[0], p[1]));
          else wb.del(keys.geo(docid));
        }
        for (const [docid, json] of shapes) {
          if (json !== null) wb.put(keys.geojson(docid), json);
          else wb.del(keys.geojson(docid));
        }
      },
      publish: () => {
        for (const f of newFields) state.register(f);
        state.all = newAll;
        for (const u of updates) applyFieldUpdate(u);
        for (const [docid, p] of geo) {
          if (p) state.geo.points.set(docid, p);
          else state.geo.points.delete(docid);
        }
        if (geo.size > 0) state.geo.changed();
        for (const [docid, json] of shapes) {
          const shape = json === null ? null : parseShape(JSON.parse(json));
          if (shape) state.shapes.set(docid, shape);
          else state.shapes.delete(docid);
        }
        state.config = config;
        state.version++;
      },
    };
  }

  /** New postings of one field from its facts' additions and removals. */
  private fieldUpdate(field: FieldFacets, deltas: Map<string, Delta>): FieldUpdate {
    const u: FieldUpdate = { field, sets: {}, numbers: new Map(), strings: new Map(), chunks: new Map() };
    const byKey = new Map<string, Map<string, Delta>>();
    for (const [fact, d] of deltas) {
      const add = sortedUnique(d.add);
      const del = sortedUnique(d.del);
      const kind = fact[0]!;
      if (kind === 'e' || kind === 'z' || kind === 'y') {
        const k = kind === 'e' ? 'E' : kind === 'z' ? 'Z' : 'Y';
        const old = k === 'E' ? field.exists : k === 'Z' ? field.nulls : field.empties;
        u.sets[k] = applyDelta(old, add, del);
        u.chunks.set(k, chunksOf(d));
      } else if (kind === 'n') {
        const n = Number(fact.slice(1));
        u.numbers.set(n, applyDelta(field.numbers.get(n) ?? EMPTY, add, del));
        u.chunks.set('N' + fact.slice(1), chunksOf(d));
      } else {
        const original = fact.slice(1);
        const key = facetKey(original);
        let m = byKey.get(key);
        if (!m) byKey.set(key, (m = new Map()));
        m.set(original, { add: [...add], del: [...del] });
      }
    }
    for (const [key, perSpelling] of byKey) {
      const old = field.strings.get(key);
      const spellings = new Map(old?.spellings ?? []);
      const chunks = new Set<number>();
      for (const [orig, d] of perSpelling) {
        const docids = applyDelta(spellings.get(orig) ?? EMPTY, d.add, d.del);
        if (docids.length > 0) spellings.set(orig, docids);
        else spellings.delete(orig);
        chunksOf(d, chunks);
      }
      u.strings.set(key, spellings.size === 0 ? null : { key, spellings, docids: unionOf(spellings) });
      u.chunks.set('O' + key, chunks);
    }
    return u;
  }

  private writeField(wb: WriteBatch, u: FieldUpdate): void {
    const fid = u.field.id;
    const keys = this.keys;
    for (const k of ['E', 'Z', 'Y'] as const) {
      const docids = u.sets[k];
      if (docids) for (const c of u.chunks.get(k)!) putChunk(wb, keys.posting(k, fid, c), chunkSlice(docids, c));
    }
    for (const [n, docids] of u.numbers) {
      for (const c of u.chunks.get('N' + String(n))!) putChunk(wb, keys.posting('N', fid, c, n), chunkSlice(docids, c));
    }
    for (const [key, v] of u.strings) {
      for (const c of u.chunks.get('O' + key)!) {
        const k = keys.posting('O', fid, c, key);
        const groups = v ? [...v.spellings].map(([o, d]) => [o, chunkSlice(d, c)] as [string, Uint32Array]).filter(([, d]) => d.length > 0) : [];
        if (groups.length > 0) wb.put(k, encodeSpellings(groups));
        else wb.del(k);
      }
    }
  }

  async rebuild(docs: () => AsyncIterable<[number, Doc]>, settings: IndexSettings): Promise<PreparedIndexUpdate> {
    const config = facetConfigOf(settings);
    if (sameFacetConfig(config, this.state.config)) return { write() {}, publish() {} };
    return this.fullBuild(docs(), config);
  }

  /** Builds the whole index from scratch: for a settings change or after every document was cleared. */
  private async fullBuild(docs: AsyncIterable<[number, Doc]> | Iterable<[number, Doc]>, config: FacetConfig): Promise<PreparedIndexUpdate> {
    const select = facetSelector(config);
    const next = new FacetState(config);
    const sets = new Map<string, Record<'E' | 'Z' | 'Y', number[]>>();
    const numbers = new Map<string, Map<number, number[]>>();
    const strings = new Map<string, Map<string, Map<string, number[]>>>();
    const all: number[] = [];
    const shapes = new Map<number, string>();
    for await (const [docid, doc] of docs) {
      all.push(docid);
      const { facts, geo } = this.facts(doc, config, select);
      for (const [field, fs] of facts) {
        next.fieldOrCreate(field);
        for (const f of fs) {
          const kind = f[0]!;
          if (kind === 'n') {
            let m = numbers.get(field);
            if (!m) numbers.set(field, (m = new Map()));
            const n = Number(f.slice(1));
            let l = m.get(n);
            if (!l) m.set(n, (l = []));
            l.push(docid);
          } else if (kind === 's') {
            let m = strings.get(field);
            if (!m) strings.set(field, (m = new Map()));
            const key = facetKey(f.slice(1));
            let sp = m.get(key);
            if (!sp) m.set(key, (sp = new Map()));
            let l = sp.get(f.slice(1));
            if (!l) sp.set(f.slice(1), (l = []));
            l.push(docid);
          } else {
            let s = sets.get(field);
            if (!s) sets.set(field, (s = { E: [], Z: [], Y: [] }));
            s[kind === 'e' ? 'E' : kind === 'z' ? 'Z' : 'Y'].push(docid);
          }
        }
      }
      if (geo.point) next.geo.points.set(docid, geo.point);
      if (geo.geojson !== null) shapes.set(docid, geo.geojson);
    }
    next.all = sortedUnique(all);
    for (const [name, s] of sets) {
      const f = next.fields.get(name)!;
      f.exists = sortedUnique(s.E);
      f.nulls = sortedUnique(s.Z);
      f.empties = sortedUnique(s.Y);
    }
    for (const [name, m] of numbers) for (const [n, l] of m) next.fields.get(name)!.numbers.set(n, sortedUnique(l));
    for (const [name, m] of strings) {
      const f = next.fields.get(name)!;
      for (const [key, sp] of m) {
        const spellings = new Map([...sp].map(([o, l]) => [o, sortedUnique(l)] as const));
        f.strings.set(key, { key, spellings, docids: unionOf(spellings) });
      }
    }
    for (const [docid, json] of shapes) {
      const shape = parseShape(JSON.parse(json));
      if (shape) next.shapes.set(docid, shape);
    }
    const keys = this.keys;
    return {
      write: (wb) => {
        wb.delPrefix(keys.space.prefix);
        wb.put(keys.meta, JSON.stringify({ fields: next.fieldNames }));
        writeChunked(next.all, (c, d) => wb.put(keys.all(c), encodeDocids(d)));
        for (const f of next.fields.values()) writeWholeField(wb, keys, f);
        for (const [docid, p] of next.geo.points) wb.put(keys.geo(docid), encodePoint(p[0], p[1]));
        for (const [docid, json] of shapes) wb.put(keys.geojson(docid), json);
      },
      publish: () => {
        next.version = this.state.version + 1;
        this.state = next;
      },
    };
  }
}

function putChunk(wb: WriteBatch, key: Buffer, docids: Uint32Array): void {
  if (docids.length > 0) wb.put(key, encodeDocids(docids));
  else wb.del(key);
}

function writeChunked(docids: Uint32Array, put: (chunk: number, slice: Uint32Array) => void): void {
  let i = 0;
  while (i < docids.length) {
    const c = chunkOf(docids[i]!);
    const slice = chunkSlice(docids, c);
    put(c, slice);
    i += slice.length;
  }
}

function writeWholeField(wb: WriteBatch, keys: FacetKeys, f: FieldFacets): void {
  const sets: [PostingKind, Uint32Array][] = [['E', f.exists], ['Z', f.nulls], ['Y', f.empties]];
  for (const [k, docids] of sets) writeChunked(docids, (c, d) => wb.put(keys.posting(k, f.id, c), encodeDocids(d)));
  for (const [n, docids] of f.numbers) writeChunked(docids, (c, d) => wb.put(keys.posting('N', f.id, c, n), encodeDocids(d)));
  for (const v of f.strings.values()) {
    writeChunked(v.docids, (c) => {
      const groups = [...v.spellings].map(([o, d]) => [o, chunkSlice(d, c)] as [string, Uint32Array]).filter(([, d]) => d.length > 0);
      wb.put(keys.posting('O', f.id, c, v.key), encodeSpellings(groups));
    });
  }
}

function applyFieldUpdate(u: FieldUpdate): void {
  const f = u.field;
  if (u.sets.E) f.exists = u.sets.E;
  if (u.sets.Z) f.nulls = u.sets.Z;
  if (u.sets.Y) f.empties = u.sets.Y;
  for (const [n, docids] of u.numbers) {
    if (docids.length > 0) f.numbers.set(n, docids);
    else f.numbers.delete(n);
  }
  for (const [key, v] of u.strings) {
    if (v) f.strings.set(key, v);
    else f.strings.delete(key);
  }
  f.changed();
}

export const facetIndexFactory: SearchIndexFactory = {
  open: (ctx) => FacetIndex.open(ctx),
};
