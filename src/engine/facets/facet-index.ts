import type { KvStore, WriteBatch } from '../../store/kv.js';
import type { Doc } from '../documents/primary-key.js';
import type { DocChange, PreparedIndexUpdate, RebuildOptions, SearchIndex, SearchIndexContext, SearchIndexFactory } from '../structures/search-index.js';
import type { IndexSettings } from '../settings/settings.js';
import { applyDelta, EMPTY, sortedUnique } from './bitmap.js';
import { chunkOf, chunkSlice, chunksOfPosting, encodeDocids, FacetKeys } from './codec.js';
import {
  checkGeoField, extractFacets, extractGeoPoint, facetConfigOf, facetKey, facetSelector, geoEnabled, geojsonEnabled, GEOJSON_FIELD,
  sameFacetConfig, type FacetConfig,
} from './extract.js';
import { FacetState, geoSegment, numberSegment, stringSegment, unionOf } from './facet-state.js';
import { FieldFacets, type StringValue } from './field-facets.js';
import { parseShape } from './geojson.js';
import { Yielder } from '../../util/yielder.js';

async function* checkingGeo(docs: AsyncIterable<[number, Doc]>, primaryKey: string): AsyncIterable<[number, Doc]> {
  for await (const entry of docs) {
    const refusal = checkGeoField(entry[1], entry[1][primaryKey]);
    if (refusal) throw refusal;
    yield entry;
  }
}

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
  sets: Partial<Record<'E' | 'Z' | 'Y', { docids: Uint32Array; chunks: Set<number> }>>;
  /** Changed values: their new documents and the chunks where they changed. */
  numbers: Map<number, { docids: Uint32Array; chunks: Set<number> }>;
  strings: Map<string, { value: StringValue | null; chunks: Set<number> }>;
  /**
   * The values with documents in each chunk where some changed, worked out while the chunks'
   * records are written (null: none left): publishing only puts them in place.
   */
  numberChunks: Map<number, Set<number> | null>;
  stringChunks: Map<number, Set<string> | null>;
  /** The field's numbers with the changed ones in place, built beside the live map when many changed (null: set one by one). */
  nextNumbers: Map<number, Uint32Array> | null;
}

/** Changed numbers of a field from which publishing swaps in a map built beside the live one. */
const SWAP_NUMBERS = 4096;

/** Chunks where any of the changed values changed. */
async function touched<K>(m: Map<K, { chunks: Set<number> }>, turns: Yielder): Promise<Map<number, Set<K>>> {
  const out = new Map<number, Set<K>>();
  for (const [k, { chunks }] of m) {
    for (const c of chunks) {
      let s = out.get(c);
      if (!s) out.set(c, (s = new Set()));
      s.add(k);
    }
    await turns.maybe();
  }
  return out;
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

  /**
   * `primaryKey`, when the batch processor passes it, turns on the refusal of malformed
   * `_geo` fields (thrown as the batch's error) while `_geo` is filterable or sortable.
   */
  async prepare(changes: readonly DocChange[], settings: IndexSettings, opts?: { reset?: boolean; primaryKey?: string | null }): Promise<PreparedIndexUpdate> {
    const config = facetConfigOf(settings);
    if (opts?.primaryKey && geoEnabled(config)) {
      for (const { after } of changes) {
        const refusal = after ? checkGeoField(after, after[opts.primaryKey]) : null;
        if (refusal) throw refusal;
      }
    }
    if (opts?.reset) {
      const docs = changes.filter((c) => c.after).map((c) => [c.docid, c.after!] as [number, Doc]);
      return this.fullBuild(docs, config);
    }
    const select = facetSelector(config);
    const perField = new Map<string, Map<string, Delta>>();
    const all: Delta = { add: [], del: [] };
    const geo = new Map<number, [number, number] | null>();
    const shapes = new Map<number, string | null>();
    // A batch of 50,000 documents takes a while here: searches and heartbeats get their turns.
    const turns = new Yielder();
    for (const { docid, before, after } of changes) {
      await turns.maybe();
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
      updates.push(await this.fieldUpdate(field, deltas, turns));
    }
    const sortDelta = (d: Delta) => ({ add: sortedUnique(d.add), del: sortedUnique(d.del) });
    const allSorted = sortDelta(all);
    const newAll = applyDelta(this.state.all, allSorted.add, allSorted.del);
    const allChunks = chunksOf(all);
    const keys = this.keys;
    const state = this.state;
    return {
      write: async (wb) => {
        if (newFields.length > 0) wb.put(keys.meta, JSON.stringify({ fields: [...state.fieldNames, ...newFields.map((f) => f.name)] }));
        for (const c of allChunks) putChunk(wb, keys.all(c), chunkSlice(newAll, c));
        for (const u of updates) await this.writeField(wb, u, turns);
        const point = (d: number) => (geo.has(d) ? geo.get(d) : state.geo.points.get(d));
        for (const c of new Set([...geo.keys()].map(chunkOf))) putRecord(wb, keys.geo(c), geoSegment(point, c));
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
  private async fieldUpdate(field: FieldFacets, deltas: Map<string, Delta>, turns: Yielder): Promise<FieldUpdate> {
    const u: FieldUpdate = {
      field, sets: {}, numbers: new Map(), strings: new Map(), numberChunks: new Map(), stringChunks: new Map(), nextNumbers: null,
    };
    const byKey = new Map<string, Map<string, Delta>>();
    for (const [fact, d] of deltas) {
      await turns.maybe();
      const add = sortedUnique(d.add);
      const del = sortedUnique(d.del);
      const kind = fact[0]!;
      if (kind === 'e' || kind === 'z' || kind === 'y') {
        const k = kind === 'e' ? 'E' : kind === 'z' ? 'Z' : 'Y';
        const old = k === 'E' ? field.exists : k === 'Z' ? field.nulls : field.empties;
        u.sets[k] = { docids: applyDelta(old, add, del), chunks: chunksOf(d) };
      } else if (kind === 'n') {
        const n = Number(fact.slice(1));
        u.numbers.set(n, { docids: applyDelta(field.numbers.get(n) ?? EMPTY, add, del), chunks: chunksOf(d) });
      } else {
        const original = fact.slice(1);
        const key = facetKey(original);
        let m = byKey.get(key);
        if (!m) byKey.set(key, (m = new Map()));
        m.set(original, { add: [...add], del: [...del] });
      }
    }
    for (const [key, perSpelling] of byKey) {
      await turns.maybe();
      const old = field.strings.get(key);
      const spellings = new Map(old?.spellings ?? []);
      const chunks = new Set<number>();
      for (const [orig, d] of perSpelling) {
        const docids = applyDelta(spellings.get(orig) ?? EMPTY, d.add, d.del);
        if (docids.length > 0) spellings.set(orig, docids);
        else spellings.delete(orig);
        chunksOf(d, chunks);
      }
      u.strings.set(key, { value: spellings.size === 0 ? null : { key, spellings, docids: unionOf(spellings) }, chunks });
    }
    if (u.numbers.size >= SWAP_NUMBERS) u.nextNumbers = await numbersAfter(field, u.numbers, turns);
    return u;
  }

  /** Rewrites the records of the chunks where the field changed, from its postings after the batch. */
  private async writeField(wb: WriteBatch, u: FieldUpdate, turns: Yielder): Promise<void> {
    const { field } = u;
    const keys = this.keys;
    for (const k of ['E', 'Z', 'Y'] as const) {
      const set = u.sets[k];
      if (set) for (const c of set.chunks) putChunk(wb, keys.segment(k, field.id, c), chunkSlice(set.docids, c));
    }
    await turns.maybe();
    const posting = (n: number) => u.numbers.get(n)?.docids ?? field.numbers.get(n);
    for (const [c, changed] of await touched(u.numbers, turns)) {
      const values = new Set([...(field.numberChunks.get(c) ?? []), ...changed]);
      putRecord(wb, keys.segment('N', field.id, c), numberSegment(values, posting, c));
      u.numberChunks.set(c, withDocsIn(values, (n) => posting(n), c));
      await turns.maybe();
    }
    const value = (k: string) => (u.strings.has(k) ? u.strings.get(k)!.value : field.strings.get(k));
    for (const [c, changed] of await touched(u.strings, turns)) {
      const values = new Set([...(field.stringChunks.get(c) ?? []), ...changed]);
      putRecord(wb, keys.segment('S', field.id, c), stringSegment(values, value, c));
      u.stringChunks.set(c, withDocsIn(values, (k) => value(k)?.docids, c));
      await turns.maybe();
    }
  }

  async rebuild(docs: () => AsyncIterable<[number, Doc]>, settings: IndexSettings, opts?: RebuildOptions): Promise<PreparedIndexUpdate> {
    const config = facetConfigOf(settings);
    if (sameFacetConfig(config, this.state.config)) return { write() {}, publish() {} };
    const primaryKey = opts?.primaryKey;
    if (!primaryKey || !geoEnabled(config) || geoEnabled(this.state.config)) return this.fullBuild(docs(), config);
    // `_geo` becomes filterable or sortable: documents stored before must hold valid points,
    // as new ones must; one that does not fails the settings change, which then changes nothing.
    return this.fullBuild(checkingGeo(docs(), primaryKey), config);
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
    next.indexChunks();
    const keys = this.keys;
    return {
      write: (wb) => {
        wb.delPrefix(keys.space.prefix);
        wb.put(keys.meta, JSON.stringify({ fields: next.fieldNames }));
        for (const c of chunksOfPosting(next.all)) wb.put(keys.all(c), encodeDocids(chunkSlice(next.all, c)));
        for (const f of next.fields.values()) writeWholeField(wb, keys, f);
        const geoDocs = Uint32Array.from(next.geo.points.keys()).sort();
        for (const c of chunksOfPosting(geoDocs)) putRecord(wb, keys.geo(c), geoSegment((d) => next.geo.points.get(d), c));
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

function putRecord(wb: WriteBatch, key: Buffer, record: Buffer | null): void {
  if (record) wb.put(key, record);
  else wb.del(key);
}

function writeWholeField(wb: WriteBatch, keys: FacetKeys, f: FieldFacets): void {
  const sets = [['E', f.exists], ['Z', f.nulls], ['Y', f.empties]] as const;
  for (const [k, docids] of sets) for (const c of chunksOfPosting(docids)) wb.put(keys.segment(k, f.id, c), encodeDocids(chunkSlice(docids, c)));
  for (const [c, values] of f.numberChunks) putRecord(wb, keys.segment('N', f.id, c), numberSegment(values, (n) => f.numbers.get(n), c));
  for (const [c, values] of f.stringChunks) putRecord(wb, keys.segment('S', f.id, c), stringSegment(values, (k) => f.strings.get(k), c));
}

/** The values among `values` with documents in `chunk`; null when none. */
function withDocsIn<K>(values: Iterable<K>, docids: (v: K) => Uint32Array | undefined, chunk: number): Set<K> | null {
  const out = new Set<K>();
  for (const v of values) if (chunkSlice(docids(v) ?? EMPTY, chunk).length > 0) out.add(v);
  return out.size > 0 ? out : null;
}

function putChunkSets<K>(into: Map<number, Iterable<K>>, sets: Map<number, Set<K> | null>): void {
  for (const [c, set] of sets) {
    if (set) into.set(c, set);
    else into.delete(c);
  }
}

/**
 * The field's numbers after the batch, in the order setting each changed one in place gives:
 * a batch of 50,000 prices changes tens of thousands, which set one by one at publish held the
 * thread 30-60 ms (with the collection it set off).
 */
async function numbersAfter(f: FieldFacets, changed: FieldUpdate['numbers'], turns: Yielder): Promise<Map<number, Uint32Array>> {
  const next = new Map<number, Uint32Array>();
  let k = 0;
  for (const [n, docids] of f.numbers) {
    next.set(n, docids);
    if ((++k & 4095) === 0) await turns.maybe();
  }
  for (const [n, { docids }] of changed) {
    if (docids.length > 0) next.set(n, docids);
    else next.delete(n);
    if ((++k & 4095) === 0) await turns.maybe();
  }
  return next;
}

function applyFieldUpdate(u: FieldUpdate): void {
  const f = u.field;
  if (u.sets.E) f.exists = u.sets.E.docids;
  if (u.sets.Z) f.nulls = u.sets.Z.docids;
  if (u.sets.Y) f.empties = u.sets.Y.docids;
  if (u.nextNumbers) f.numbers = u.nextNumbers;
  else {
    for (const [n, { docids }] of u.numbers) {
      if (docids.length > 0) f.numbers.set(n, docids);
      else f.numbers.delete(n);
    }
  }
  for (const [key, { value }] of u.strings) {
    if (value) f.strings.set(key, value);
    else f.strings.delete(key);
  }
  putChunkSets(f.numberChunks, u.numberChunks);
  putChunkSets(f.stringChunks, u.stringChunks);
  f.changed();
}

export const facetIndexFactory: SearchIndexFactory = {
  open: (ctx) => FacetIndex.open(ctx),
};
