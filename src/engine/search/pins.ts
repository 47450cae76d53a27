// Pinned documents (dynamic search rules) in a result list. A pinned document must exist and
// pass the search's filter, but need not match the query; it is shown once, at its position,
// and the organic results flow around it. Pins past the end of the organic results follow
// them. With `distinct`, a pinned document takes its distinct value from the organic results.

import type { IndexHandle } from '../indexes/index-handle.js';
import type { IndexState } from '../fulltext/index-state.js';
import type { PinRequest } from '../search-rules/rules.js';
import type { RankedHit } from './rank-query.js';

export interface ResolvedPin {
  docid: number;
  position: number;
}

/** The pins that hold for this search, in placing order (position, then rank). */
export function resolvePins(
  handle: IndexHandle,
  requests: readonly PinRequest[],
  allowed: Uint8Array | null,
  distinct: ((docid: number) => string[]) | null,
): ResolvedPin[] {
  const seen = new Set<number>();
  const values = new Set<string>();
  const out: (ResolvedPin & { rank: number })[] = [];
  // Best rank first: a document pinned by several rules keeps its best pin.
  for (const r of [...requests].sort((a, b) => a.rank - b.rank)) {
    const docid = handle.ext.get(r.id);
    if (docid === undefined || seen.has(docid)) continue;
    if (allowed && allowed[docid] !== 1) continue;
    if (distinct) {
      const keys = distinct(docid);
      if (keys.some((k) => values.has(k))) continue;
      for (const k of keys) values.add(k);
    }
    seen.add(docid);
    out.push({ docid, position: r.position, rank: r.rank });
  }
  return out.sort((a, b) => a.position - b.position || a.rank - b.rank).map(({ docid, position }) => ({ docid, position }));
}

/** The filter's allowed set without the pinned documents (and their distinct values), for the organic search. */
export function withoutPinned(state: IndexState, allowed: Uint8Array | null, pins: readonly ResolvedPin[], distinct: ((docid: number) => string[]) | null): Uint8Array {
  const n = state.capacity + 1;
  const out = allowed ? Uint8Array.from(allowed.subarray(0, n)) : new Uint8Array(n).fill(1);
  for (const p of pins) out[p.docid] = 0;
  if (distinct) {
    const pinnedKeys = new Set(pins.flatMap((p) => distinct(p.docid)));
    if (pinnedKeys.size > 0) {
      for (const d of state.docids) if (out[d] === 1 && distinct(d).some((k) => pinnedKeys.has(k))) out[d] = 0;
    }
  }
  return out;
}

/** Organic items with the pinned ones at their positions (pins given in placing order). */
export function placePins<T>(organic: readonly T[], pins: readonly { item: T; position: number }[]): T[] {
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (i < organic.length || j < pins.length) {
    if (j < pins.length && (pins[j]!.position <= out.length || i >= organic.length)) out.push(pins[j++]!.item);
    else out.push(organic[i++]!);
  }
  return out;
}

/** How a pinned hit is ranked: first, whatever the query, with its pin in the score details. */
export function pinnedHit(pin: ResolvedPin): RankedHit {
  return { docid: pin.docid, score: 1, details: { pin: { order: 0, position: pin.position } }, values: [] };
}

/** Ascending union of a universe and the pinned docids. */
export function withPinnedUniverse(universe: Uint32Array, pins: readonly ResolvedPin[]): Uint32Array {
  if (pins.length === 0) return universe;
  return Uint32Array.from(new Set([...universe, ...pins.map((p) => p.docid)])).sort();
}
