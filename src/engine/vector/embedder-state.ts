// What one embedder of one index holds: per document its embeddings and where they came
// from (stored durably, one record a document), and the searchable copy (slots, with an
// HNSW graph over them once there are enough). The graph is kept up to date in the
// background; vectors it does not cover yet are scanned exactly, so results never lag.
// The graph only proposes candidates: their scores are computed exactly from the slots.

import { decodeBits, decodeFloats, encodeBits, encodeFloats, normalized, quantized } from './distance.js';
import { AnnGraph } from './ann-graph.js';
import { scanRange } from './exact-scan.js';
import { vectorHash, type SavedGraph } from './graph-file.js';
import { TopK, VectorSlots } from './vector-slots.js';

/** One document's embeddings for one embedder. */
export interface DocVectors {
  /** Given by the user and kept as they are (`regenerate: false`). */
  userProvided: boolean;
  /** Made again when the document's text changes. */
  regenerate: boolean;
  /** Digest of the text they were made from (generated ones only). */
  textHash: string | null;
  vectors: Float32Array[];
  /** Embedder with fragments, generated vectors: per vector, its fragment and the digest of what that rendered to. */
  fragments?: FragmentDigest[];
}

export type FragmentDigest = [name: string, hash: string];

export interface EmbedderMeta {
  fingerprint: string;
  /** The indexing-relevant configuration as last applied (template, quantization, searchable fields...). */
  key: string;
  dims: number | null;
  quantized: boolean;
}

const USER = 1;
const REGEN = 2;
const BITS = 4;
const FRAGS = 8;

export function encodeRecord(r: DocVectors, isQuantized: boolean): Buffer {
  const hash = Buffer.from(r.textHash ?? '', 'utf8');
  const dims = r.vectors[0]?.length ?? 0;
  const head = Buffer.alloc(2 + hash.length + 6);
  head[0] = (r.userProvided ? USER : 0) | (r.regenerate ? REGEN : 0) | (isQuantized ? BITS : 0) | (r.fragments ? FRAGS : 0);
  head[1] = hash.length;
  hash.copy(head, 2);
  head.writeUInt16BE(r.vectors.length, 2 + hash.length);
  head.writeUInt32BE(dims, 4 + hash.length);
  const body = r.vectors.map((v) => (isQuantized ? encodeBits(v) : encodeFloats(v)));
  // Fragment digests follow the vectors, so records without them read as before.
  if (r.fragments) body.push(Buffer.from(JSON.stringify(r.fragments), 'utf8'));
  return Buffer.concat([head, ...body]);
}

export function decodeRecord(b: Buffer): DocVectors {
  const flags = b[0]!;
  const hashLen = b[1]!;
  const textHash = hashLen > 0 ? b.toString('utf8', 2, 2 + hashLen) : null;
  const count = b.readUInt16BE(2 + hashLen);
  const dims = b.readUInt32BE(4 + hashLen);
  let off = 8 + hashLen;
  const vectors: Float32Array[] = [];
  for (let i = 0; i < count; i++) {
    if (flags & BITS) {
      vectors.push(decodeBits(b, off, dims));
      off += Math.ceil(dims / 8);
    } else {
      vectors.push(decodeFloats(b, off, dims));
      off += dims * 4;
    }
  }
  const out: DocVectors = { userProvided: !!(flags & USER), regenerate: !!(flags & REGEN), textHash, vectors };
  if (flags & FRAGS) out.fragments = JSON.parse(b.toString('utf8', off)) as FragmentDigest[];
  return out;
}

/** Up to this many live vectors (or allowed documents) the search is an exact scan. */
export const EXACT_LIMIT = 4096;
/**
 * Candidates asked from the graph at the least: higher finds more of the true neighbours,
 * at a cost (on the benchmark's clustered vectors, 640 gives a recall@10 of 0.97).
 */
export const SEARCH_EF = 640;

export interface DocEntry {
  userProvided: boolean;
  regenerate: boolean;
  textHash: string | null;
  slots: number[];
  fragments?: FragmentDigest[];
}

/** Puts documents' vectors back where a saved graph had them (see {@link EmbedderState.restoreFrom}). */
export interface GraphRestore {
  /** Places a document's vectors at its saved slots if each is still the vector saved there; false if not (`set` it after). */
  place(docid: number, r: DocVectors): boolean;
  /** Once every document was placed or set: uses the saved graph if enough of it still holds. */
  finish(): void;
}

export class EmbedderState {
  readonly docs = new Map<number, DocEntry>();
  slots: VectorSlots | null = null;
  graph: AnnGraph | null = null;
  /** Told when the graph has caught up with the slots (to save it). */
  onGraphComplete: ((state: EmbedderState) => void) | null = null;
  /** Vectors that came back linked from a saved graph at open (0: none, the graph is built anew). */
  restoredVectors = 0;
  private indexing = false;

  constructor(
    readonly name: string,
    public meta: EmbedderMeta,
  ) {}

  get dims(): number | null {
    return this.meta.dims;
  }

  remove(docid: number): void {
    const e = this.docs.get(docid);
    if (!e) return;
    for (const s of e.slots) this.slots?.kill(s);
    this.docs.delete(docid);
  }

  /** The searchable form of a vector: unit length (after quantizing, for a quantized embedder). */
  private unit(v: Float32Array): Float32Array {
    return normalized(this.meta.quantized ? quantized(v) : v);
  }

  private entry(r: DocVectors, slots: number[]): DocEntry {
    const entry: DocEntry = { userProvided: r.userProvided, regenerate: r.regenerate, textHash: r.textHash, slots };
    if (r.fragments) entry.fragments = r.fragments;
    return entry;
  }

  set(docid: number, r: DocVectors): void {
    this.remove(docid);
    const slots: number[] = [];
    if (r.vectors.length > 0) {
      const dims = r.vectors[0]!.length;
      this.slots ??= new VectorSlots(dims);
      for (const v of r.vectors) slots.push(this.slots.append(docid, this.unit(v)));
    }
    this.docs.set(docid, this.entry(r, slots));
  }

  /**
   * Fills an empty state from its stored records (at open) keeping a saved graph's slots:
   * the documents whose vectors are unchanged go back to the slots the graph links, the
   * others are `set` after them and linked in the background like new ones.
   */
  restoreFrom(saved: SavedGraph, dims: number): GraphRestore {
    const slots = (this.slots = VectorSlots.killed(dims, saved.docOf.length));
    const savedSlots = new Map<number, number[]>();
    let savedLive = 0;
    let placed = 0;
    saved.docOf.forEach((d, s) => {
      if (d < 0) return;
      savedLive++;
      const at = savedSlots.get(d);
      if (at) at.push(s);
      else savedSlots.set(d, [s]);
    });
    return {
      place: (docid, r) => {
        const at = savedSlots.get(docid);
        if (!at || at.length !== r.vectors.length || r.vectors[0]!.length !== dims) return false;
        const units = r.vectors.map((v) => this.unit(v));
        for (let i = 0; i < at.length; i++) if (vectorHash(units[i]!) !== saved.hashes[at[i]!]) return false;
        for (let i = 0; i < at.length; i++) slots.put(at[i]!, docid, units[i]!);
        this.docs.set(docid, this.entry(r, at));
        placed += at.length;
        return true;
      },
      finish: () => {
        // Mostly replaced since it was saved: linking the new vectors into it would cost
        // about what a new graph does, and leave the graph mostly tombstones.
        if (placed * 2 >= savedLive && slots === this.slots) {
          try {
            this.graph = AnnGraph.load(slots, saved.graphPath, saved.docOf.length);
            this.restoredVectors = placed;
            return;
          } catch {
            this.graph = null;
          }
        }
        // Not used: the slots are packed as a load without a saved graph lays them, rather
        // than a new graph linking the saved layout's killed slots (blank vectors) as waypoints.
        this.compact();
      },
    };
  }

  clear(): void {
    this.docs.clear();
    this.slots = null;
    this.graph = null;
  }

  /**
   * The `k` documents closest to `query`, best first. `allowed` restricts the documents;
   * with `allowedList` (its members) small, those documents are scanned exactly.
   */
  search(query: Float32Array, k: number, allowed: ((docid: number) => boolean) | null, allowedList?: readonly number[]): { docid: number; dot: number }[] {
    const slots = this.slots;
    if (!slots || k <= 0 || slots.live === 0) return [];
    const unit = normalized(this.meta.quantized ? quantized(query) : query);
    const top = new TopK(k);
    if (allowedList && allowedList.length <= EXACT_LIMIT) return this.scanList(unit, top, allowedList);
    const graph = this.graph;
    if (!graph || graph.size === 0 || slots.live <= EXACT_LIMIT) {
      scanRange(slots, unit, top, allowed);
      return top.sorted();
    }
    const docOf = slots.docOf;
    // Killed slots and refused documents take room among the graph's candidates: ask for
    // more in proportion, and again if that was not enough.
    const share = (slots.live / slots.count) * (allowedList ? allowedList.length / Math.max(1, this.docs.size) : 1);
    let wanted = Math.ceil(Math.max(SEARCH_EF, k * 2) / Math.max(share, 1e-6));
    for (;;) {
      // A walk that wide visits about as many vectors as a scan, which is exact.
      if (wanted * 8 > graph.size) {
        if (allowedList) return this.scanList(unit, new TopK(k), allowedList);
        const all = new TopK(k);
        scanRange(slots, unit, all, allowed);
        return all.sorted();
      }
      const candidates = graph.nearest(unit, wanted);
      for (const s of candidates) {
        const d = docOf[s]!;
        if (d >= 0 && (!allowed || allowed(d))) top.offer(d, slots.dot(unit, s));
      }
      if (top.full || candidates.length < wanted) break;
      wanted *= 4;
    }
    scanRange(slots, unit, top, allowed, graph.size);
    return top.sorted();
  }

  /** Exact scan of the vectors of the listed documents. */
  private scanList(unit: Float32Array, top: TopK, docids: readonly number[]): { docid: number; dot: number }[] {
    const slots = this.slots!;
    for (const d of docids) for (const s of this.docs.get(d)?.slots ?? []) top.offer(d, slots.dot(unit, s));
    return top.sorted();
  }

  /** Whether searches need a graph: above EXACT_LIMIT, or once one exists. */
  private wantsGraph(slots: VectorSlots): boolean {
    return this.graph !== null || slots.live >= EXACT_LIMIT;
  }

  /** Vectors the graph does not cover yet (searched exactly meanwhile); 0 when none is wanted. */
  graphPending(): number {
    const slots = this.slots;
    if (!slots || !this.wantsGraph(slots)) return 0;
    return slots.count - (this.graph?.size ?? 0);
  }

  /** Brings the graph up to date with the slots, a little at a time, off the request path. */
  scheduleIndexing(): void {
    const slots = this.slots;
    if (!slots || this.indexing) return;
    // Mostly dead slots: start over on a compact copy rather than keep walking tombstones.
    if (slots.count > EXACT_LIMIT && slots.live * 2 < slots.count) this.compact();
    if (!this.wantsGraph(this.slots!)) return;
    this.indexing = true;
    const step = () => {
      const s = this.slots;
      const g = (this.graph ??= s ? new AnnGraph(s) : null);
      if (!s || !g) {
        this.indexing = false;
        return;
      }
      const until = performance.now() + 6;
      while (g.size < s.count && performance.now() < until) g.insertNext();
      if (g.size < s.count) setImmediate(step);
      else {
        this.indexing = false;
        this.onGraphComplete?.(this);
      }
    };
    setImmediate(step);
  }

  /** Synchronously completes the graph (benchmarks, tests). */
  finishIndexing(): void {
    const s = this.slots;
    if (!s) return;
    const g = (this.graph ??= new AnnGraph(s));
    while (g.size < s.count) g.insertNext();
    this.onGraphComplete?.(this);
  }

  private compact(): void {
    const old = this.slots!;
    const fresh = new VectorSlots(old.dims, Math.max(64, old.live));
    for (const [docid, e] of this.docs) e.slots = e.slots.map((s) => fresh.append(docid, old.vector(s)));
    this.slots = fresh;
    this.graph = null;
  }
}
