// Ranks and scores as the reference computes them (score_details.rs): every rule gives
// a rank between 1 and its maximum; the global score merges ranks lexicographically
// (mixed radix), so a rule only matters within ties of the rules before it.

export interface Rank {
  rank: number;
  max: number;
}

/** A rule the time budget left out (`searchCutoffMs`): it takes one off the rank so far. */
export const SKIPPED_RANK: Rank = Object.freeze({ rank: 0, max: 1 });

export function localScore(r: Rank): number {
  return r.rank / r.max;
}

export function mergeRank(outer: Rank, inner: Rank): Rank {
  return { rank: Math.max(0, outer.rank - 1) * inner.max + inner.rank, max: outer.max * inner.max };
}

/** The `_rankingScore` of a list of ranks (sort rules contribute none). */
export function globalScore(ranks: readonly Rank[]): number {
  let r: Rank = { rank: 1, max: 1 };
  for (const inner of ranks) r = mergeRank(r, inner);
  return localScore(r);
}

/** A rule's cost turned into a rank: cost 0 is the best rank. */
export function rankFromCost(cost: number, maxCost: number): Rank {
  const max = maxCost + 1;
  return { rank: Math.max(0, max - cost), max };
}
