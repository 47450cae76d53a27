// From query terms to "units": a unit covers one term or 2–3 consecutive terms (an
// n-gram such as "sun flower" → "sunflower") and lists every posting list that can match
// it, each with its typo cost: the exact word, words it is a prefix of, one- and two-typo
// derivations, the best split into two adjacent words, and synonyms.

import { CARRY, postingOf, prefixPosting, type BatchDelta, type CarriedMemo, type IndexState } from '../fulltext/index-state.js';
import { EMPTY_POSTING, unionPostings, type Posting } from '../fulltext/postings.js';
import { slotOf } from '../fulltext/list-arena.js';
import { INDEXED_PREFIX_LENGTHS } from '../fulltext/prefix-table.js';
import { isNumeric, typoBudget } from '../tokenizer/index.js';
import { phrasePosting, wordPosting } from './phrase.js';
import type { QueryTerm } from './query-parser.js';
import { mayDerive, typoDerivations } from './typo-search.js';
import type { Yielder } from '../../util/yielder.js';

export interface Source {
  posting: Posting;
  /** Typos this source counts for (a split word counts as one). */
  typo: number;
  /** The unit's exact term: its original word, or the phrase itself. */
  exact: boolean;
  /** Word id for word sources; -1 for phrases and prefix lists. */
  wordId: number;
  /** An indexed-prefix list: first positions of every word with the prefix. */
  prefixList?: boolean;
  /** The indexed prefix's id, with `prefixList`. */
  prefixId?: number;
  /**
   * For a union of several words' short lists (same typo count, none the exact term): those
   * words, which a document's record names, and their own lists, which name kept scans.
   */
  members?: { wordIds: number[]; lists: Posting[] };
}

export interface Unit {
  id: number;
  /** First and last term index covered. */
  start: number;
  end: number;
  /** Query positions of the first and last word. */
  qpos: number;
  qposEnd: number;
  isPhrase: boolean;
  isPrefix: boolean;
  /** Typo cost every match pays (n for an n-gram). */
  baseTypo: number;
  /** Highest typo cost of any source, base included. */
  maxTypo: number;
  /**
   * The typo cost the query allows this unit, base included: what the reference counts in
   * `maxTypoCount`, whatever the index holds. A word allowed no typo still counts one (it
   * may match split in two), a phrase none.
   */
  typoBudget: number;
  sources: Source[];
  /** Words of the exact term (one word, or a phrase), or null when the index lacks it. */
  exactWords: (string | null)[] | null;
  /** What the highlighter looks for. */
  highlight: { words: string[]; phrases: (string | null)[][]; prefix: string | null };
}

export interface DerivationOptions {
  typoEnabled: boolean;
  thresholds: { oneTypo: number; twoTypos: number };
  disableOnWords: ReadonlySet<string>;
  disableOnNumbers: boolean;
}

const MAX_SYNONYM_PHRASES = 50;
const MAX_NGRAM = 3;
const MAX_WORD_BYTES = 250;

function typosAllowed(word: string, opts: DerivationOptions): number {
  if (!opts.typoEnabled || opts.disableOnWords.has(word)) return 0;
  if (opts.disableOnNumbers && isNumeric(word)) return 0;
  return typoBudget(word, opts.thresholds);
}

/** A word term's (or n-gram's) typo budget from the typos its word is allowed. */
function budgetOf(allowed: number, ngram: number): number {
  return (ngram > 1 ? ngram : 0) + (allowed === 0 ? 1 : allowed);
}

/** Typos an n-gram of `n` words may have: those of the joined word, one less per extra word. */
function ngramTypos(word: string, n: number, opts: DerivationOptions): number {
  return Math.max(0, typosAllowed(word, opts) - (n - 1));
}

/** The query terms that can form an n-gram starting at `s` with `n` words, or null. */
function ngramWords(terms: readonly QueryTerm[], s: number, n: number): string[] | null {
  const slice = terms.slice(s, s + n);
  if (slice.length < n || slice.some((t) => t.kind !== 'word')) return null;
  const ws = slice as { lemma: string; position: number }[];
  if (ws.some((t, k) => k > 0 && t.position !== ws[k - 1]!.position + 1)) return null;
  return ws.map((t) => t.lemma);
}

/**
 * The highest typo budget over every way to cover the terms with single terms and the
 * 2- and 3-grams the query allows, whether or not the index holds them: the maximum of
 * the typo rule when no `words` rule narrowed the query first (matching strategy `all`).
 */
export function queryTypoBudget(terms: readonly QueryTerm[], opts: DerivationOptions): number {
  const best = new Array<number>(terms.length + 1).fill(-Infinity);
  best[0] = 0;
  for (let s = 0; s < terms.length; s++) {
    const here = best[s]!;
    const t = terms[s]!;
    const single = t.kind === 'phrase' ? 0 : budgetOf(typosAllowed(t.lemma, opts), 1);
    best[s + 1] = Math.max(best[s + 1]!, here + single);
    for (let n = 2; n <= MAX_NGRAM; n++) {
      const words = ngramWords(terms, s, n);
      if (!words) continue;
      const word = words.join('');
      if (Buffer.byteLength(word) > MAX_WORD_BYTES) continue;
      best[s + n] = Math.max(best[s + n]!, here + budgetOf(ngramTypos(word, n, opts), n));
    }
  }
  return best[terms.length]!;
}

function livePosting(state: IndexState, id: number): Posting {
  return postingOf(state, id);
}

/** Split postings kept per state, over all pairs: 2 M entries (16 MB) at most. */
const PAIR_CACHE_ENTRIES = 2_000_000;
/** Splits carried to the next state at most (each costs a check per batch). */
const CARRIED_PAIRS = 16_384;

interface KeptPair {
  left: string;
  right: string;
  /** Their word ids, -1 for a word not in the dictionary when the pair was read. */
  leftId: number;
  rightId: number;
  /** The list, or only its count past the budget. */
  kept: Posting | number;
}

/**
 * Two-word phrases (documents where `left` is directly followed by `right`) read for word
 * splits, kept per state within a budget, their counts always; carried to the next state but
 * for pairs whose both words are among the batch's new or removed documents (a pair changes
 * only in a document holding both).
 */
class KeptPairs implements CarriedMemo {
  readonly entries = new Map<string, KeptPair>();
  listed = 0;

  keep(state: IndexState, key: string, left: string, right: string, p: Posting): void {
    const leftId = state.sorted.idOf(left) ?? -1;
    const rightId = state.sorted.idOf(right) ?? -1;
    if (this.listed + p.docs.length <= PAIR_CACHE_ENTRIES) {
      this.listed += p.docs.length;
      this.entries.set(key, { left, right, leftId, rightId, kept: p });
    } else this.entries.set(key, { left, right, leftId, rightId, kept: p.ndocs });
  }

  async [CARRY](delta: BatchDelta, next: IndexState, yielder: Yielder): Promise<KeptPairs> {
    const removedWords = delta.removedWords;
    // A word the dictionary lacked may have come with the batch.
    const ids = (w: string, id: number): number => (id >= 0 ? id : (next.sorted.idOf(w) ?? -1));
    const added = (id: number): boolean => id >= 0 && slotOf(delta.segment.words, id) >= 0;
    const out = new KeptPairs();
    let n = 0;
    // The newest ones: their counts are kept past the budget, and would pile up write after write.
    const skip = this.entries.size - CARRIED_PAIRS;
    for (const [key, e] of this.entries) {
      if (n++ < skip) continue;
      if ((n & 1023) === 0) await yielder.maybe();
      const a = ids(e.left, e.leftId);
      const b = ids(e.right, e.rightId);
      if (!(added(a) && added(b)) && !(removedWords.has(a) && removedWords.has(b))) {
        out.entries.set(key, e);
        if (typeof e.kept !== 'number') out.listed += e.kept.docs.length;
      }
    }
    return out;
  }
}

function keptPairs(state: IndexState): KeptPairs {
  let kept = state.memo.get('pairs') as KeptPairs | undefined;
  if (!kept) state.memo.set('pairs', (kept = new KeptPairs()));
  return kept;
}

/**
 * Documents (and start positions) where `left` is directly followed by `right`. Every
 * query word tries its splits, and short words split into the most frequent words there
 * are: the lists are kept per state (within a budget), their counts always.
 */
function pairPosting(state: IndexState, left: string, right: string): Posting {
  const key = `${left}\u0000${right}`;
  const pairs = keptPairs(state);
  const e = pairs.entries.get(key);
  if (e !== undefined && typeof e.kept !== 'number') return e.kept;
  const p = phrasePosting(state, [left, right]);
  pairs.keep(state, key, left, right, p);
  return p;
}

/** Documents where `left` is directly followed by `right`. */
function pairFrequency(state: IndexState, left: string, right: string): number {
  const e = keptPairs(state).entries.get(`${left}\u0000${right}`);
  if (e === undefined) return pairPosting(state, left, right).ndocs;
  return typeof e.kept === 'number' ? e.kept : e.kept.ndocs;
}

/** Best split of a word into two adjacent indexed words, by how often the pair occurs. */
function bestSplit(state: IndexState, word: string, exclude: string[] | null): [string, string] | null {
  // A pair occurs in no more documents than either word: splits are joined from the highest
  // such bound down, and those whose bound cannot beat the best so far are not joined (on a
  // tie the leftmost split wins, as when they were tried from the left).
  const splits: { at: number; left: string; right: string; bound: number }[] = [];
  const chars = [...word];
  let left = '';
  for (let i = 1; i < chars.length; i++) {
    left += chars[i - 1];
    const right = word.slice(left.length);
    if (exclude && exclude.length === 2 && exclude[0] === left && exclude[1] === right) continue;
    const bound = Math.min(wordPosting(state, left).ndocs, wordPosting(state, right).ndocs);
    if (bound > 0) splits.push({ at: i, left, right, bound });
  }
  splits.sort((a, b) => b.bound - a.bound || a.at - b.at);
  let best: { at: number; left: string; right: string } | null = null;
  let bestFreq = 0;
  for (const sp of splits) {
    if (sp.bound < bestFreq || (best !== null && sp.bound === bestFreq && sp.at > best.at)) {
      if (sp.bound < bestFreq) break;
      continue;
    }
    const freq = pairFrequency(state, sp.left, sp.right);
    if (freq > bestFreq || (freq === bestFreq && freq > 0 && best !== null && sp.at < best.at)) {
      bestFreq = freq;
      best = sp;
    }
  }
  return best ? [best.left, best.right] : null;
}

const TYPO_CACHE_SIZE = 20_000;

/** A word's typo derivations as word ids and words, which stay valid from state to state. */
interface KeptTypo {
  word: string;
  k: number;
  prefix: boolean;
  one: number[];
  oneWords: string[];
  two: number[];
  twoWords: string[];
}

/**
 * Typo derivations depend only on the dictionary and which of its words occur: they are
 * kept per state, as query words repeat, and carried to the next state but for the words
 * that could reach one of the batch's flipped words (new to the dictionary, or whose
 * documents came or all went): searching them all again made each query word's first search
 * after any write cost 0.3 ms instead of 0.07 on the longdocs dictionary.
 */
class KeptTypos implements CarriedMemo {
  readonly entries = new Map<string, KeptTypo>();

  async [CARRY](delta: BatchDelta, _next: IndexState, yielder: Yielder): Promise<KeptTypos | undefined> {
    const flipped = delta.flipped;
    if (flipped === null) return undefined;
    const out = new KeptTypos();
    let n = 0;
    for (const [key, e] of this.entries) {
      if (!flipped.some((x) => mayDerive(e.word, x, e.k, e.prefix))) out.entries.set(key, e);
      if ((++n & 255) === 0) await yielder.maybe();
    }
    return out;
  }
}

function cachedTypos(state: IndexState, word: string, maxTypo: number, prefix: boolean, live: (i: number) => boolean): KeptTypo {
  let cache = state.memo.get('typos') as KeptTypos | undefined;
  if (!cache) state.memo.set('typos', (cache = new KeptTypos()));
  const k = maxTypo >= 2 ? 2 : 1;
  const key = `${k}${prefix ? 'p' : 'w'}${word}`;
  let e = cache.entries.get(key);
  if (!e) {
    const d = typoDerivations(state.sorted, word, maxTypo, prefix, live);
    const { ids, words } = state.sorted;
    e = {
      word, k, prefix,
      one: d.one.map((i) => ids[i]!), oneWords: d.one.map((i) => words[i]!),
      two: d.two.map((i) => ids[i]!), twoWords: d.two.map((i) => words[i]!),
    };
    if (cache.entries.size >= TYPO_CACHE_SIZE) cache.entries.clear();
    cache.entries.set(key, e);
  }
  return e;
}

interface WordUnitSpec {
  word: string;
  maxTypo: number;
  isPrefix: boolean;
  /** Component words of an n-gram (null for a single term). */
  ngramWords: string[] | null;
}

function wordSources(state: IndexState, spec: WordUnitSpec, opts: DerivationOptions, unit: Unit): void {
  const { word } = spec;
  if (Buffer.byteLength(word) > MAX_WORD_BYTES) return;
  const sources = unit.sources;
  const hl = unit.highlight;
  hl.words.push(word);
  const exactId = state.sorted.idOf(word);
  if (exactId !== undefined) {
    const p = livePosting(state, exactId);
    if (p.docs.length > 0) {
      sources.push({ posting: p, typo: 0, exact: true, wordId: exactId });
      unit.exactWords = [word];
    }
  }
  const sorted = state.sorted;
  const derived0 = sources.length;
  if (spec.isPrefix) {
    hl.prefix = word;
    const chars = [...word].length;
    const list = state.prefixes?.id(word);
    // A short prefix reads its indexed list (one entry per document and field) instead of
    // thousands of word lists; for a prefix after other terms the first position in each
    // field stands for the others, like the reference's per-prefix position data.
    const listed = list === undefined ? null : prefixPosting(state, list);
    if (listed && (INDEXED_PREFIX_LENGTHS as readonly number[]).includes(chars)) {
      const p = listed;
      if (p.docs.length > 0) sources.push({ posting: p, typo: 0, exact: false, wordId: -1, prefixList: true, prefixId: list! });
    } else {
      const [lo, hi] = sorted.prefixRange(word);
      for (let i = lo; i < hi; i++) {
        const id = sorted.ids[i]!;
        if (id === exactId || id >= state.wordCount) continue;
        const p = livePosting(state, id);
        if (p.docs.length > 0) sources.push({ posting: p, typo: 0, exact: false, wordId: id });
      }
    }
  }
  if (spec.maxTypo > 0) {
    const live = (i: number): boolean => {
      const id = sorted.ids[i]!;
      return id < state.wordCount && state.view.hasWord(id);
    };
    const derived = cachedTypos(state, word, spec.maxTypo, spec.isPrefix, live);
    for (const [ids, words, typo] of [[derived.one, derived.oneWords, 1], [derived.two, derived.twoWords, 2]] as const) {
      for (let i = 0; i < ids.length; i++) {
        sources.push({ posting: livePosting(state, ids[i]!), typo, exact: false, wordId: ids[i]! });
        hl.words.push(words[i]!);
      }
    }
  }
  mergeShortLists(state, sources, derived0);
  const split = bestSplit(state, word, spec.ngramWords);
  if (split) {
    sources.push({ posting: pairPosting(state, split[0], split[1]), typo: 1, exact: false, wordId: -1 });
    hl.phrases.push(split);
  }
  const key = spec.ngramWords ? spec.ngramWords.join(' ') : word;
  synonymSources(state, key, unit);
}

/** Word lists of at most this many documents are read as one list per typo count (mergeShortLists). */
const SHORT_LIST_DOCS = 64;
/** Fewest short lists worth a union. */
const MERGE_MIN_LISTS = 4;
/** Unions kept per state (each is rebuilt in well under a millisecond). */
const KEPT_UNIONS = 4096;

/**
 * Replaces the short lists among `sources` from `from` on (words a prefix or a typo derives:
 * "the" is the prefix of 250 words, most in a handful of documents) by one union per typo
 * count. Every rule reads a unit's sources one by one, each with its own seek per document
 * or bucket, and compares occurrences by minimum over all of them: one list of the same
 * entries gives the same costs for one seek. Kept per state, so that its caches (distinct
 * documents) serve the next queries.
 */
function mergeShortLists(state: IndexState, sources: Source[], from: number): void {
  const groups = new Map<number, number[]>();
  for (let i = from; i < sources.length; i++) {
    const s = sources[i]!;
    if (s.wordId < 0 || s.exact || s.posting.ndocs > SHORT_LIST_DOCS) continue;
    let g = groups.get(s.typo);
    if (g === undefined) groups.set(s.typo, (g = []));
    g.push(i);
  }
  const replaced = new Map<number, Source | null>();
  for (const [typo, at] of groups) {
    if (at.length < MERGE_MIN_LISTS) continue;
    const wordIds = at.map((i) => sources[i]!.wordId);
    const lists = at.map((i) => sources[i]!.posting);
    let kept = state.memo.get('unions') as Map<string, Posting> | undefined;
    if (kept === undefined) state.memo.set('unions', (kept = new Map()));
    const key = wordIds.join(',');
    let posting = kept.get(key);
    if (posting === undefined) {
      posting = unionPostings(lists);
      if (kept.size >= KEPT_UNIONS) kept.clear();
      kept.set(key, posting);
    }
    replaced.set(at[0]!, { posting, typo, exact: false, wordId: -1, members: { wordIds, lists } });
    for (let k = 1; k < at.length; k++) replaced.set(at[k]!, null);
  }
  if (replaced.size === 0) return;
  let k = from;
  for (let i = from; i < sources.length; i++) {
    const r = replaced.get(i);
    if (r === null) continue;
    sources[k++] = r ?? sources[i]!;
  }
  sources.length = k;
}

function synonymSources(state: IndexState, key: string, unit: Unit): void {
  const alternatives = state.synonyms.get(key);
  if (!alternatives) return;
  for (const alt of alternatives.slice(0, MAX_SYNONYM_PHRASES)) {
    if (alt.length === 1) {
      const id = state.sorted.idOf(alt[0]!);
      const p = id === undefined ? EMPTY_POSTING : livePosting(state, id);
      // Highlighted as a whole, like a phrase: a synonym is no prefix of the typed word.
      unit.highlight.phrases.push([alt[0]!]);
      if (p.docs.length > 0) unit.sources.push({ posting: p, typo: 0, exact: false, wordId: id! });
    } else {
      unit.highlight.phrases.push([...alt]);
      const p = phrasePosting(state, alt);
      if (p.docs.length > 0) unit.sources.push({ posting: p, typo: 0, exact: false, wordId: -1 });
    }
  }
}

function newUnit(id: number, start: number, end: number, qpos: number, qposEnd: number, isPhrase: boolean, isPrefix: boolean): Unit {
  return {
    id, start, end, qpos, qposEnd, isPhrase, isPrefix,
    baseTypo: end > start ? end - start + 1 : 0,
    maxTypo: 0,
    typoBudget: 0,
    sources: [],
    exactWords: null,
    highlight: { words: [], phrases: [], prefix: null },
  };
}

function finishUnit(u: Unit): Unit {
  let max = 0;
  for (const s of u.sources) if (s.typo > max) max = s.typo;
  u.maxTypo = u.baseTypo + max;
  return u;
}

/** Every unit of the query: one per term, then the 2- and 3-grams of adjacent word terms. */
export function buildUnits(state: IndexState, terms: readonly QueryTerm[], opts: DerivationOptions): Unit[] {
  const units: Unit[] = [];
  terms.forEach((t, i) => {
    if (t.kind === 'phrase') {
      const u = newUnit(units.length, i, i, t.start, t.end, true, false);
      u.typoBudget = 0;
      const p = phrasePosting(state, t.words);
      if (p.docs.length > 0) u.sources.push({ posting: p, typo: 0, exact: true, wordId: -1 });
      u.exactWords = t.words;
      u.highlight.phrases.push(t.words);
      units.push(finishUnit(u));
      return;
    }
    const u = newUnit(units.length, i, i, t.position, t.position, false, t.isPrefix);
    const allowed = typosAllowed(t.lemma, opts);
    u.typoBudget = budgetOf(allowed, 1);
    wordSources(state, { word: t.lemma, maxTypo: allowed, isPrefix: t.isPrefix, ngramWords: null }, opts, u);
    units.push(finishUnit(u));
  });
  for (let n = 2; n <= MAX_NGRAM; n++) {
    for (let s = 0; s + n <= terms.length; s++) {
      const lemmas = ngramWords(terms, s, n);
      if (!lemmas) continue;
      const ws = terms.slice(s, s + n) as { lemma: string; position: number; isPrefix: boolean }[];
      const word = lemmas.join('');
      const last = ws[n - 1]!;
      const u = newUnit(units.length, s, s + n - 1, ws[0]!.position, last.position, false, last.isPrefix);
      const maxTypo = ngramTypos(word, n, opts);
      u.typoBudget = budgetOf(maxTypo, n);
      wordSources(state, { word, maxTypo, isPrefix: last.isPrefix, ngramWords: lemmas }, opts, u);
      if (u.sources.length > 0) units.push(finishUnit(u));
    }
  }
  return units;
}
