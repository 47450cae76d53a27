// Word id → the units it matches (with the typo count and exactness of that match), so
// a document's token list can be matched against the whole query in one pass. Sources
// that are not single words (phrases, prefix lists) are kept aside and looked up in
// their posting lists.

import { recordTokens, type IndexState } from '../fulltext/index-state.js';
import { seekDoc, type Posting } from '../fulltext/postings.js';
import type { Unit } from './derivations.js';
import type { SearchScratch } from './scratch.js';

/** Documents whose tokens one query keeps (a few MB of long documents at most). */
const KEPT_TOKENS_DOCS = 4096;

export interface ListSource {
  unit: number;
  typo: number;
  exact: boolean;
  posting: Posting;
}

/** Receives one match: unit id, typo count (n-gram base included), exactness, and where. */
export type MatchVisitor = (unit: number, typo: number, exact: boolean, fp: number) => void;

export class WordUnitMap {
  private readonly slot: Int32Array;
  private readonly entryUnit: number[] = [];
  private readonly entryTypo: number[] = [];
  private readonly entryExact: boolean[] = [];
  private readonly entryNext: number[] = [];
  private readonly words: number[] = [];
  readonly lists: ListSource[] = [];
  private released = false;
  private readonly tokens = new Map<number, Uint32Array | undefined>();
  /** Decoded tokens live in the search's scratch: a few KB per long document, for thousands of them. */
  private readonly alloc: (n: number) => Uint32Array;

  constructor(state: IndexState, units: readonly Unit[], private readonly scratch: SearchScratch) {
    this.slot = scratch.words.acquire(state.wordCount);
    this.alloc = (n) => scratch.uints(n);
    for (const u of units) {
      for (const src of u.sources) {
        const typo = src.typo + u.baseTypo;
        if (src.members) for (const w of src.members.wordIds) this.add(w, u.id, typo, src.exact);
        else if (src.wordId >= 0) this.add(src.wordId, u.id, typo, src.exact);
        else this.lists.push({ unit: u.id, typo, exact: src.exact, posting: src.posting });
      }
    }
  }

  private add(wordId: number, unit: number, typo: number, exact: boolean): void {
    const e = this.entryUnit.length;
    this.entryUnit.push(unit);
    this.entryTypo.push(typo);
    this.entryExact.push(exact);
    const prev = this.slot[wordId]!;
    if (prev === -1) this.words.push(wordId);
    this.entryNext.push(prev);
    this.slot[wordId] = e;
  }

  /** Calls `visit` for every match of the query in the document, in token order then list order. */
  forEachMatch(state: IndexState, d: number, visit: MatchVisitor): void {
    // A document's matches are read twice (its aggregates, then its occurrences for the
    // proximity rule): the tokens of the first few thousand documents read are kept.
    let t = this.tokens.get(d);
    if (t === undefined && !this.tokens.has(d)) {
      t = recordTokens(state, d, this.alloc);
      if (this.tokens.size < KEPT_TOKENS_DOCS) this.tokens.set(d, t);
    }
    if (t) {
      const slot = this.slot;
      for (let i = 0; i < t.length; i += 2) {
        let e = slot[t[i]!]!;
        if (e === -1) continue;
        const fp = t[i + 1]!;
        for (; e !== -1; e = this.entryNext[e]!) visit(this.entryUnit[e]!, this.entryTypo[e]!, this.entryExact[e]!, fp);
      }
    }
    for (const l of this.lists) {
      const p = l.posting;
      for (let i = seekDoc(p, d); i < p.docs.length && p.docs[i] === d; i++) visit(l.unit, l.typo, l.exact, p.fps[i]!);
    }
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    for (const w of this.words) this.slot[w] = -1;
    this.scratch.words.release();
  }
}
