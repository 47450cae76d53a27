// What an embedder with fragments needs for each document: one embedding per indexing
// fragment that renders. Each rendering is keyed by its digest; an embedding whose rendering
// did not change is kept (whichever fragment made it), so only changed fragments are
// embedded again, after a document update as after a change of the fragments.

import type { Doc } from '../documents/primary-key.js';
import { textHash } from './document-template.js';
import type { DocEntry, DocVectors, FragmentDigest } from './embedder-state.js';
import { fragmentText, renderIndexing, type Fragments } from './fragments.js';

type Loader = () => Promise<DocVectors | null>;

interface Rendered {
  name: string;
  hash: string;
  text: string;
}

function sameDigests(rendered: readonly Rendered[], old: readonly FragmentDigest[]): boolean {
  return rendered.length === old.length && rendered.every((r, i) => r.name === old[i]![0] && r.hash === old[i]![1]);
}

export class FragmentPlan {
  private readonly pending = new Map<number, { digests: FragmentDigest[]; load: Loader | null }>();

  constructor(
    private readonly fragments: Fragments,
    /** Shared with the planner: what to embed, by digest. */
    private readonly texts: Map<string, string>,
    private readonly full: boolean,
  ) {}

  private render(doc: Doc): Rendered[] {
    return renderIndexing(this.fragments, doc).map(({ name, value }) => {
      const text = fragmentText(value);
      return { name, hash: textHash(text), text };
    });
  }

  /** Whether the document's fragments render as they did when `old` was made. */
  unchanged(doc: Doc, old: DocEntry): boolean {
    return !old.userProvided && !!old.fragments && sameDigests(this.render(doc), old.fragments);
  }

  plan(docid: number, doc: Doc, old: DocEntry | undefined, load: Loader | null): void {
    const rendered = this.render(doc);
    const before = old && !old.userProvided && !this.full ? old.fragments : undefined;
    if (before && sameDigests(rendered, before)) return;
    const kept = new Set(before?.map(([, hash]) => hash) ?? []);
    for (const r of rendered) if (!kept.has(r.hash)) this.texts.set(r.hash, r.text);
    const reuses = rendered.some((r) => kept.has(r.hash));
    this.pending.set(docid, { digests: rendered.map((r) => [r.name, r.hash]), load: reuses ? load : null });
  }

  /** Adds the records of the planned documents; `obtained` gives the embedding of a digest. */
  async resolve(obtained: (hash: string) => Float32Array, set: Map<number, DocVectors>): Promise<void> {
    for (const [docid, p] of this.pending) {
      const old = new Map<string, Float32Array>();
      const record = p.load ? await p.load() : null;
      record?.fragments?.forEach(([, hash], i) => {
        const v = record.vectors[i];
        if (v) old.set(hash, v);
      });
      const vectors = p.digests.map(([, hash]) => old.get(hash) ?? obtained(hash));
      set.set(docid, { userProvided: false, regenerate: true, textHash: null, vectors, fragments: p.digests });
    }
  }
}
