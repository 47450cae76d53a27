// Phrase matching: documents where the words occur at consecutive positions of one
// field (under `proximityPrecision: byAttribute`, in one field). Used for quoted phrases, split words and multi-word synonyms; the result is a
// posting list of the phrase's start positions, so the rest of the search treats a
// phrase like a word.

import { postingOf, type IndexState } from '../fulltext/index-state.js';
import { docEnd, EMPTY_POSTING, gallop, seekDoc, type Posting } from '../fulltext/postings.js';

/** Posting list of a single word by its normalized form (empty when unknown). */
export function wordPosting(state: IndexState, word: string): Posting {
  const id = state.sorted.idOf(word);
  if (id === undefined || id >= state.wordCount) return EMPTY_POSTING;
  return postingOf(state, id);
}

function hasFp(p: Posting, from: number, to: number, fp: number): boolean {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const v = p.fps[mid]!;
    if (v === fp) return true;
    if (v < fp) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

/**
 * Start positions of the phrase. `null` entries (stop words) match any position. The
 * rarest word drives the scan; the others are probed by binary search.
 */
export function phrasePosting(state: IndexState, words: readonly (string | null)[]): Posting {
  const parts: { p: Posting; off: number }[] = [];
  words.forEach((w, off) => {
    if (w !== null) parts.push({ p: wordPosting(state, w), off });
  });
  if (parts.length === 0 || parts.some((x) => x.p.docs.length === 0)) return EMPTY_POSTING;
  const first = parts[0]!.off;
  for (const x of parts) x.off -= first;
  if (parts.length === 1) return parts[0]!.p;
  if (state.settings.proximityPrecision === 'byAttribute') return sameFieldPosting(parts);
  let driver = parts[0]!;
  for (const x of parts) if (x.p.docs.length < driver.p.docs.length) driver = x;
  const others = parts.filter((x) => x !== driver);
  const cursors = others.map(() => 0);
  const from = new Int32Array(others.length);
  const to = new Int32Array(others.length);
  let outDocs: Uint32Array = new Uint32Array(64);
  let outFps: Uint32Array = new Uint32Array(64);
  let n = 0;
  let ndocs = 0;
  const dp = driver.p;
  for (let i = 0; i < dp.docs.length; ) {
    const d = dp.docs[i]!;
    const end = docEnd(dp, i);
    let present = true;
    for (let k = 0; k < others.length; k++) {
      const op = others[k]!.p;
      // Documents come in ascending order: gallop from the last one found.
      const at = gallop(op.docs, d, cursors[k]!);
      cursors[k] = at;
      if (at >= op.docs.length || op.docs[at] !== d) {
        present = false;
        break;
      }
      from[k] = at;
      to[k] = docEnd(op, at);
    }
    if (present) {
      let matched = false;
      for (let j = i; j < end; j++) {
        const startFp = dp.fps[j]! - driver.off;
        if ((startFp & 0xffff) > (dp.fps[j]! & 0xffff)) continue;
        let ok = true;
        for (let k = 0; k < others.length && ok; k++) ok = hasFp(others[k]!.p, from[k]!, to[k]!, startFp + others[k]!.off);
        if (ok) {
          if (n === outDocs.length) {
            outDocs = grown(outDocs);
            outFps = grown(outFps);
          }
          outDocs[n] = d;
          outFps[n] = startFp;
          n++;
          matched = true;
        }
      }
      if (matched) ndocs++;
    }
    i = end;
  }
  if (n === 0) return EMPTY_POSTING;
  const docs = outDocs.slice(0, n);
  const fps = outFps.slice(0, n);
  if (ascending(docs, fps)) return { docs, fps, ndocs };
  // Driver positions shifted by an offset can come out of order within a document.
  const order = Array.from(docs.keys()).sort((a, b) => docs[a]! - docs[b]! || fps[a]! - fps[b]!);
  return { docs: Uint32Array.from(order, (k) => docs[k]!), fps: Uint32Array.from(order, (k) => fps[k]!), ndocs };
}

function grown(a: Uint32Array): Uint32Array {
  const b = new Uint32Array(a.length * 2);
  b.set(a);
  return b;
}

/** Whether entries are in posting order: by document, then by fp. */
function ascending(docs: Uint32Array, fps: Uint32Array): boolean {
  for (let i = 1; i < docs.length; i++) {
    if (docs[i]! < docs[i - 1]! || (docs[i] === docs[i - 1] && fps[i]! < fps[i - 1]!)) return false;
  }
  return true;
}

/** Field ids of a document's entries [from, to), ascending and distinct. */
function fieldsOf(p: Posting, from: number, to: number): number[] {
  const out: number[] = [];
  for (let j = from; j < to; j++) {
    const f = p.fps[j]! >>> 16;
    if (out.length === 0 || out[out.length - 1] !== f) out.push(f);
  }
  return out;
}

function shareField(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (a[i] === b[j]) return true;
    if (a[i]! < b[j]!) i++;
    else j++;
  }
  return false;
}

/**
 * A phrase under `proximityPrecision: byAttribute`, as the reference resolves it: word
 * positions are not kept, only the attributes, so each pair of words at most two apart
 * in the phrase must share an attribute. The positions given are those of the first word,
 * in the attributes holding every word when there are such.
 */
function sameFieldPosting(parts: readonly { p: Posting; off: number }[]): Posting {
  let di = 0;
  for (let k = 1; k < parts.length; k++) if (parts[k]!.p.docs.length < parts[di]!.p.docs.length) di = k;
  const dp = parts[di]!.p;
  const cursors = parts.map(() => 0);
  const outDocs: number[] = [];
  const outFps: number[] = [];
  let ndocs = 0;
  const ranges: [number, number][] = parts.map(() => [0, 0]);
  const fields: number[][] = parts.map(() => []);
  for (let i = 0; i < dp.docs.length; ) {
    const d = dp.docs[i]!;
    const end = docEnd(dp, i);
    let ok = true;
    for (let k = 0; k < parts.length && ok; k++) {
      if (k === di) {
        ranges[k] = [i, end];
      } else {
        const op = parts[k]!.p;
        const at = seekDoc(op, d, cursors[k]);
        cursors[k] = at;
        if (at >= op.docs.length || op.docs[at] !== d) ok = false;
        else ranges[k] = [at, docEnd(op, at)];
      }
      if (ok) fields[k] = fieldsOf(parts[k]!.p, ranges[k]![0], ranges[k]![1]);
    }
    for (let a = 0; a < parts.length && ok; a++) {
      for (let b = a + 1; b < parts.length && ok && parts[b]!.off - parts[a]!.off <= 2; b++) ok = shareField(fields[a]!, fields[b]!);
    }
    if (ok) {
      const [from, to] = ranges[0]!;
      const first = parts[0]!.p;
      const inAll = (f: number) => fields.every((list) => list.includes(f));
      let any = false;
      for (let j = from; j < to; j++) {
        if (!inAll(first.fps[j]! >>> 16)) continue;
        outDocs.push(d);
        outFps.push(first.fps[j]!);
        any = true;
      }
      if (!any) {
        for (let j = from; j < to; j++) {
          outDocs.push(d);
          outFps.push(first.fps[j]!);
        }
      }
      ndocs++;
    }
    i = end;
  }
  if (outDocs.length === 0) return EMPTY_POSTING;
  return { docs: Uint32Array.from(outDocs), fps: Uint32Array.from(outFps), ndocs };
}
