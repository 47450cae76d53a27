// Cropping, as the reference does it: pick the interval of matches that fits the crop
// length with the most distinct query terms, then the closest matches, then the most in
// query order; then grow the window word by word on both sides, preferring to stop at
// sentence boundaries (hard separators).

import type { Token } from '../tokenizer/index.js';
import type { Match } from './matcher.js';

function isPhrase(m: Match): boolean {
  return m.firstToken !== m.lastToken;
}

function intervalScore(matches: readonly Match[]): [number, number, number] {
  const ids = new Set<number>();
  let order = 0;
  let distance = 0;
  for (let i = 0; i < matches.length; i++) {
    const m = matches[i]!;
    const next = matches[i + 1];
    if (isPhrase(m)) {
      const inside = m.lastWord - m.firstWord;
      order += inside;
      distance -= inside;
    }
    if (next) {
      if (Math.min(...next.ids) > Math.min(...m.ids)) order++;
      distance -= Math.min(next.firstWord - m.lastWord, 7);
    }
    for (const id of m.ids) ids.add(id);
  }
  return [ids.size, distance, order];
}

function better(a: [number, number, number], b: [number, number, number]): boolean {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! > b[i]!;
  return false;
}

export function bestInterval(matches: readonly Match[], cropSize: number): [Match, Match] {
  let best: { first: number; last: number; score: [number, number, number] } | null = null;
  const save = (first: number, last: number) => {
    const score = intervalScore(matches.slice(first, last + 1));
    if (!best || better(score, best.score)) best = { first, last, score };
  };
  let first = 0;
  let firstPos = matches[0]!.firstWord;
  matches.forEach((next, index) => {
    const nextLast = next.lastWord;
    if (nextLast - firstPos < cropSize) return;
    if (index !== 0) save(first, index - 1);
    for (;;) {
      first++;
      if (first === matches.length) {
        first--;
        break;
      }
      firstPos = matches[first]!.firstWord;
      if (firstPos > nextLast || nextLast - firstPos < cropSize) break;
    }
  });
  const last = matches.length - 1;
  const m = matches[first]!;
  if (first !== last || m.lastWord - m.firstWord + 1 < cropSize) save(first, last);
  const b = best as { first: number; last: number } | null;
  return b ? [matches[b.first]!, matches[b.last]!] : [matches[0]!, matches[0]!];
}

type Kind = 'word' | 'soft' | 'hard';

function kindOf(t: Token): Kind {
  if (t.kind !== 'separator') return 'word';
  return t.separatorKind === 'hard' ? 'hard' : 'soft';
}

/**
 * The crop window as [token before it, token after it] (null: the text's start or end);
 * the window is the text between the end of the first and the start of the second.
 */
export function cropWindow(tokens: readonly Token[], matches: readonly Match[], cropSize: number): [number | null, number | null] {
  const n = tokens.length;
  let remaining = cropSize;
  let forward = true;
  let beforeStart = 0;
  let afterStart = 0;
  if (matches.length > 0) {
    const [first, last] = bestInterval(matches, cropSize);
    const size = last.lastWord - first.firstWord + 1;
    const fits = cropSize >= size;
    forward = fits;
    remaining = fits ? cropSize - size : size - cropSize;
    afterStart = last.lastToken + 1 < n ? last.lastToken + 1 : n;
    beforeStart = forward ? first.firstToken : 0;
  }
  let b = beforeStart - 1;
  let a = forward ? afterStart : Math.min(afterStart, n - 1);
  const peekBefore = (): Kind | null => (b >= 0 ? kindOf(tokens[b]!) : null);
  const peekAfter = (): Kind | null => (forward ? (a < n ? kindOf(tokens[a]!) : null) : a >= 0 ? kindOf(tokens[a]!) : null);
  const nextAfter = () => (forward ? a++ : a--);
  while (remaining > 0) {
    const bk = peekBefore();
    const ak = peekAfter();
    if (bk !== null && ak !== null) {
      if (bk !== 'word' && ak !== 'word') {
        if (bk === ak) {
          b--;
          if (remaining > 1) nextAfter();
        } else if (bk === 'hard') nextAfter();
        else b--;
      } else if (bk === 'word' && ak !== 'word') {
        b--;
        remaining--;
      } else if (bk !== 'word' && ak === 'word') {
        nextAfter();
        remaining--;
      } else {
        b--;
        remaining--;
        if (remaining > 0) {
          nextAfter();
          remaining--;
        }
      }
    } else if (bk !== null) {
      b--;
      if (bk === 'word') remaining--;
    } else if (ak !== null) {
      nextAfter();
      if (ak === 'word') remaining--;
    } else break;
  }
  const before = b >= 0 ? b : null;
  const after = forward ? (a < n ? a : null) : a >= 0 ? a : null;
  return [before, after];
}
