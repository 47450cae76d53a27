// The packed (document, unit) slot of the match table, and the position costs it holds.

/** Flags in `exact`: the exact term occurs; it occurs at its query position; and that field holds nothing else. */
export const EXACT_PRESENT = 1;
export const EXACT_AT_START = 2;
export const EXACT_WHOLE_FIELD = 4;

// Each (document, unit) slot packs, in one u32 (0 = the unit does not match):
//   bits 0-2  typo count + 1     bits 3-9  position cost     bits 10-12  exactness flags
//   bits 13-31  attribute cost (weight × words)
export const TYPO_MASK = 7;
export const POS_SHIFT = 3;
export const POS_MASK = 0x7f;
export const EXACT_SHIFT = 10;
export const FID_SHIFT = 13;
export const FID_MAX = (1 << 19) - 1;
export const EXACT_BITS = 7 << EXACT_SHIFT;

/** Positions as the reference stores them for the position rule. */
export function bucketedPosition(p: number): number {
  if (p < 16) return p;
  if (p < 24) return 24;
  let b = 32;
  while (b < p) b *= 2;
  return b;
}

export function costFromDistance(d: number): number {
  if (d <= 1) return d;
  if (d <= 4) return 2;
  if (d <= 7) return 3;
  if (d <= 11) return 4;
  if (d <= 16) return 5;
  if (d <= 24) return 6;
  if (d <= 64) return 7;
  if (d <= 256) return 8;
  if (d <= 1024) return 9;
  return 10;
}

const BUCKET = new Uint16Array(65536);
/** Position cost of a one-word term at query position 0, the common case. */
export const COST_AT_0 = new Uint8Array(65536);
for (let p = 0; p < 65536; p++) {
  BUCKET[p] = Math.min(65535, bucketedPosition(p));
  COST_AT_0[p] = costFromDistance(BUCKET[p]!);
}

/** Folds one match into a slot: fewer typos win; among equal typos the best costs are kept. */
export function merge(cur: number, tt: number, pc: number, fc: number, flags: number): number {
  if (fc > FID_MAX) fc = FID_MAX;
  const ct = cur & TYPO_MASK;
  let next: number;
  if (ct === 0 || tt < ct) {
    next = tt | (pc << POS_SHIFT) | (((cur >>> EXACT_SHIFT) & 7) << EXACT_SHIFT) | (fc << FID_SHIFT);
  } else if (tt === ct) {
    const cp = (cur >>> POS_SHIFT) & POS_MASK;
    const cf = cur >>> FID_SHIFT;
    next = (cur & ((1 << FID_SHIFT) - 1) & ~(POS_MASK << POS_SHIFT)) | ((pc < cp ? pc : cp) << POS_SHIFT) | ((fc < cf ? fc : cf) << FID_SHIFT);
  } else next = cur;
  return (next | (flags << EXACT_SHIFT)) >>> 0;
}

export function positionCost(p: number, q: number, terms: number): number {
  if (q === 0 && terms === 1) return COST_AT_0[p]!;
  const dist = Math.abs(BUCKET[p]! - q);
  let pc = costFromDistance(dist);
  for (let k = 1; k < terms; k++) pc += costFromDistance(dist + k);
  return pc;
}

