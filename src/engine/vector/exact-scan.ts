// Exact scans of a range of slots. Long unfiltered ranges (a graph still being built after
// a restart, a large import not yet linked) go through usearch's SIMD brute force, several
// times faster than the scalar loop; its candidates are scored again by the scalar dot
// product, so the scores do not depend on the CPU's vector instructions.

import usearch from 'usearch';
import type { TopK, VectorSlots } from './vector-slots.js';

/** Below this many slots the scalar loop costs less than the native call. */
const NATIVE_FROM = 2048;

/** Offers to `top` the slots in [from, count) whose document `allowed` accepts. */
export function scanRange(slots: VectorSlots, unit: Float32Array, top: TopK, allowed: ((docid: number) => boolean) | null, from = 0): void {
  const to = slots.count;
  // The native scan reads arrays from the start of their buffer (a view's offset is lost),
  // so it always covers [0, to): worth it only while the range is most of that.
  if (allowed || to - from < NATIVE_FROM || from > to - from || slots.data.byteOffset !== 0) {
    slots.scan(unit, top, allowed, from, to);
    return;
  }
  const { docOf, dims } = slots;
  let dead = 0;
  for (let s = from; s < to; s++) if (docOf[s]! < 0) dead++;
  // Slots before `from`, killed slots and a document's other vectors take room in the
  // answer: ask for that much more.
  const wanted = Math.min(to, from + 2 * top.k + dead);
  const query = unit.byteOffset === 0 ? unit : Float32Array.from(unit);
  const { keys } = usearch.exactSearch(slots.data.subarray(0, to * dims), query, dims, wanted, usearch.MetricKind.IP, 1) as InstanceType<typeof usearch.Matches>;
  const docs = new Set<number>();
  for (let i = 0; i < keys.length; i++) {
    const s = Number(keys[i]!);
    const d = s >= from ? docOf[s]! : -1;
    if (d < 0) continue;
    top.offer(d, slots.dot(unit, s));
    docs.add(d);
  }
  // Fewer than `k` documents among a partial answer (documents with many vectors): the
  // scalar loop settles it.
  if (docs.size < top.k && keys.length < to) slots.scan(unit, top, null, from, to);
}
