// Where each unit occurs inside one document, for the rules that compare positions of
// different terms (proximity, exact attribute). Read from the document's record: a word
// id → units map turns its token list into per-unit position lists in one pass.

import type { IndexState } from '../fulltext/index-state.js';
import type { Unit } from './derivations.js';
import type { MatchTable } from './match-table.js';

export interface DocOccurrences {
  /** Per unit id: fps of the occurrences of its least-typo derivations. */
  any: (number[] | undefined)[];
  /** Per unit id: fps of the occurrences of its exact term. */
  exact: (number[] | undefined)[];
}

export class OccurrenceFinder {
  private readonly cache = new Map<number, DocOccurrences>();

  constructor(
    private readonly state: IndexState,
    private readonly units: readonly Unit[],
    private readonly table: MatchTable,
  ) {}

  of(d: number): DocOccurrences {
    const cached = this.cache.get(d);
    if (cached) return cached;
    const out: DocOccurrences = { any: [], exact: [] };
    const table = this.table;
    // Every searchable field counts for proximity and exactness, searched or not.
    const weights = table.opts.rankWeights ?? table.opts.weights;
    const exactFields = table.opts.exactFields;
    table.ensure([d]);
    table.words.forEachMatch(this.state, d, (u, typo, exact, fp) => {
      const f = fp >>> 16;
      if (f >= weights.length || weights[f]! < 0) return;
      if (exactFields[f] === 1 && typo > this.units[u]!.baseTypo) return;
      // Only the derivations with the fewest typos in this document take part, as in the
      // reference where later rules only see the typo bucket's derivations.
      if (typo === table.typoAt(d, u)) (out.any[u] ??= []).push(fp);
      if (exact) (out.exact[u] ??= []).push(fp);
    });
    for (const list of out.any) if (list) ascending(list);
    for (const list of out.exact) if (list) ascending(list);
    this.cache.set(d, out);
    return out;
  }
}

/**
 * Sorts in place unless already ascending: the usual case, a record's tokens coming in fp
 * order (lists read apart, such as a phrase's, come after). Sorting anyway allocated work
 * arrays for every document a proximity was computed for.
 */
function ascending(list: number[]): void {
  for (let i = 1; i < list.length; i++) {
    if (list[i - 1]! > list[i]!) {
      list.sort((a, b) => a - b);
      return;
    }
  }
}
