// What one embedder needs for each document of a change: keep what it has, take the
// vectors the document gives, embed its text (again only when the text changed, or the
// embedder itself changed), or drop it. Texts are collected first and embedded together.

import { ApiError } from '../../errors/api-error.js';
import { extractDocumentId, type Doc } from '../documents/primary-key.js';
import type { IndexSettings } from '../settings/settings.js';
import { textHash } from './document-template.js';
import { FragmentPlan } from './fragment-plan.js';
import { EmbedError, indexingError } from './embed-error.js';
import type { DocEntry, DocVectors, EmbedderMeta } from './embedder-state.js';
import type { RuntimeEmbedder } from './embedders.js';
import { checkDimensions, parseVectorsEntry, vectorsObject } from './vectors-field.js';

/** The parts of the configuration and settings that change the stored embeddings' texts. */
export function indexingKey(e: RuntimeEmbedder, s: IndexSettings): string {
  const key: unknown[] = [e.template?.source ?? null, e.template?.maxBytes ?? null, e.quantized, e.template ? s.searchableAttributes : null];
  // Appended only when there are fragments, so the keys of other embedders stay as stored.
  if (e.fragments) key.push(e.fragments.indexing.map((f) => [f.name, f.value]));
  return JSON.stringify(key);
}

type Loader = () => Promise<DocVectors | null>;

function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
  }
  return d[a.length]![b.length]!;
}

export class DocumentPlanner {
  private readonly decided = new Map<number, DocVectors | null>();
  private readonly pending = new Map<number, string>();
  private readonly texts = new Map<string, string>();
  private readonly kept: [number, Loader, (r: DocVectors) => DocVectors][] = [];
  private readonly missing: { id: string; doc: Doc }[] = [];
  private readonly fragmentPlan: FragmentPlan | null;

  constructor(
    readonly embedder: RuntimeEmbedder,
    public meta: EmbedderMeta,
    private readonly settings: IndexSettings,
    private readonly primaryKey: string | null,
    private readonly opts: { strict: boolean; full: boolean },
  ) {
    this.fragmentPlan = embedder.fragments ? new FragmentPlan(embedder.fragments, this.texts, opts.full) : null;
  }

  private idOf(docid: number, doc: Doc): string {
    if (this.primaryKey) {
      try {
        return extractDocumentId(doc, this.primaryKey);
      } catch {
        // fall through to the internal id
      }
    }
    return String(docid);
  }

  private checkGiven(vectors: Float32Array[], id: string): void {
    checkDimensions(vectors, this.meta.dims ?? undefined, this.embedder.name, id);
    if (this.meta.dims === null && vectors.length > 0) this.meta = { ...this.meta, dims: vectors[0]!.length };
  }

  /**
   * Decides for one document. `old` is what the embedder holds for it now; `load` reads its
   * vectors when they must be written again (`requantize`: quantization was just turned on).
   */
  plan(docid: number, doc: Doc | null, load: Loader | null, old: DocEntry | undefined, requantize = false): void {
    const name = this.embedder.name;
    if (doc === null) {
      if (old) this.decided.set(docid, null);
      return;
    }
    const id = this.idOf(docid, doc);
    const entry = parseVectorsEntry(vectorsObject(doc, id), name, id);
    const userSource = this.embedder.source === 'userProvided';
    const keep = (userProvided: boolean) => {
      if (old && load) {
        if (!requantize && old.userProvided === userProvided) return;
        this.kept.push([docid, load, (r) => ({ ...r, userProvided, regenerate: !userProvided && r.regenerate })]);
      } else this.decided.set(docid, { userProvided, regenerate: false, textHash: null, vectors: [] });
    };
    if (entry.kind === 'given' && entry.embeddings !== null) {
      this.checkGiven(entry.embeddings, id);
      const hash = entry.regenerate && this.embedder.template ? textHash(this.embedder.template.render(doc, this.settings.searchableAttributes)) : null;
      this.decided.set(docid, { userProvided: !entry.regenerate, regenerate: entry.regenerate, textHash: hash, vectors: entry.embeddings });
      return;
    }
    if (entry.kind === 'given' && !entry.regenerate) return keep(true);
    if (entry.kind === 'absent' && old?.userProvided) return keep(true);
    if (userSource) {
      if (entry.kind === 'absent' && old) return keep(old.userProvided);
      if (this.opts.strict) this.missing.push({ id, doc });
      return;
    }
    if (this.fragmentPlan) {
      if (requantize && old && load && this.fragmentPlan.unchanged(doc, old)) return keep(false);
      this.fragmentPlan.plan(docid, doc, old, load);
      return;
    }
    const text = this.embedder.template!.render(doc, this.settings.searchableAttributes);
    const hash = textHash(text);
    if (old && !old.userProvided && old.textHash === hash && !this.opts.full) {
      if (requantize) keep(false);
      return;
    }
    this.pending.set(docid, hash);
    this.texts.set(hash, text);
  }

  /** The reference's error for documents of a `userProvided` embedder that give no vectors. */
  throwMissing(): void {
    if (this.missing.length === 0) return;
    const name = this.embedder.name;
    const first = this.missing[0]!.id;
    const others = this.missing.length > 1 ? ` and at least ${this.missing.length - 1} other document(s)` : '';
    let msg = `While embedding documents for embedder \`${name}\`: no vectors provided for document \`${first}\`${others}\n- Note: \`${name}\` has \`source: userProvided\`, so documents must provide embeddings as an array in \`_vectors.${name}\`.`;
    const fieldTypos = new Map<string, number>();
    const embedderTypos = new Map<string, number>();
    for (const { doc } of this.missing) {
      for (const k of Object.keys(doc)) if (k !== '_vectors' && editDistance(k, '_vectors') <= 2) fieldTypos.set(k, (fieldTypos.get(k) ?? 0) + 1);
      const v = doc['_vectors'];
      if (v && typeof v === 'object' && !Array.isArray(v)) {
        for (const k of Object.keys(v)) if (!(k in this.settings.embedders)) embedderTypos.set(k, (embedderTypos.get(k) ?? 0) + 1);
      }
    }
    const hints = [
      ...[...fieldTypos].slice(0, 2).map(([k, n]) => `\n- Hint: try replacing \`${k}\` by \`_vectors\` in ${n} document(s).`),
      ...[...embedderTypos].slice(0, 2).map(([k, n]) => `\n- Hint: try replacing \`_vectors.${k}\` by \`_vectors.${name}\` in ${n} document(s).`),
    ];
    msg += hints.length > 0 ? hints.join('') : `\n- Hint: opt-out for a document with \`_vectors.${name}: null\``;
    throw new ApiError('vector_embedding_error', msg);
  }

  textsToEmbed(): Map<string, string> {
    return this.texts;
  }

  /** An embedding obtained for `hash`, checked against the embedder's dimensions. */
  private obtained(vectors: Map<string, Float32Array>, hash: string): Float32Array {
    const v = vectors.get(hash);
    if (!v) throw indexingError(this.embedder.name, new EmbedError('undecided', 'no embedding was produced'));
    if (this.meta.dims === null) this.meta = { ...this.meta, dims: v.length };
    if (v.length !== this.meta.dims) {
      throw indexingError(this.embedder.name, new EmbedError('runtime', `was expecting embeddings of dimension \`${this.meta.dims}\`, got embeddings of dimensions \`${v.length}\``));
    }
    return v;
  }

  /** Turns the decisions into records, with the embeddings obtained for the texts. */
  async resolve(vectors: Map<string, Float32Array>, set: Map<number, DocVectors>, removed: Set<number>): Promise<void> {
    for (const [docid, hash] of this.pending) {
      set.set(docid, { userProvided: false, regenerate: true, textHash: hash, vectors: [this.obtained(vectors, hash)] });
    }
    if (this.fragmentPlan) await this.fragmentPlan.resolve((h) => this.obtained(vectors, h), set);
    for (const [docid, r] of this.decided) {
      if (r === null) removed.add(docid);
      else set.set(docid, r);
    }
    for (const [docid, load, change] of this.kept) {
      const r = await load();
      if (r) set.set(docid, change(r));
    }
  }
}
