// What the highlighter looks for, built from the query units: every derivation word
// (typos included) and every phrase (quoted phrases, split words, multi-word synonyms),
// each tied to the query terms it stands for. Prefix terms match any token starting with
// the prefix and highlight only the typed part.

import type { Token } from '../tokenizer/index.js';
import type { Unit } from '../search/derivations.js';

interface LocatedWords {
  words: string[];
  ids: number[];
  isPrefix: boolean;
  originalChars: number;
}

interface LocatedPhrase {
  words: (string | null)[];
  ids: number[];
}

export type MatchType =
  | { kind: 'full'; charCount: number; ids: number[] }
  | { kind: 'partial'; rest: (string | null)[]; ids: number[] };

function charLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** How many characters of the token's original text the first `lemmaChars` lemma characters cover. */
function originalChars(token: Token, lemmaChars: number): number {
  return Math.min(lemmaChars, token.charEnd - token.charStart);
}

/** Continues a phrase match with the next word token. */
export function continuePhrase(rest: (string | null)[], ids: number[], token: Token): MatchType | null {
  const first = rest[0];
  if (first === undefined) return null;
  const ok = first === null ? token.kind === 'stopWord' : token.lemma === first;
  if (!ok) return null;
  if (rest.length > 1) return { kind: 'partial', rest: rest.slice(1), ids };
  return { kind: 'full', charCount: token.charEnd - token.charStart, ids };
}

export class MatchingWords {
  private readonly words: LocatedWords[] = [];
  private readonly phrases: LocatedPhrase[] = [];

  constructor(units: readonly Unit[]) {
    for (const u of units) {
      const ids: number[] = [];
      for (let t = u.start; t <= u.end; t++) ids.push(t);
      for (const p of u.highlight.phrases) this.phrases.push({ words: p, ids });
      const words = [...new Set(u.highlight.words)];
      if (words.length > 0) {
        this.words.push({
          words,
          ids,
          isPrefix: u.highlight.prefix !== null,
          originalChars: charLength(u.highlight.prefix ?? words[0]!),
        });
      }
    }
    // Exact words before prefixes, longer spans (n-grams) first, as the reference does.
    this.words.sort((a, b) => Number(a.isPrefix) - Number(b.isPrefix) || b.ids.length - a.ids.length);
  }

  get isEmpty(): boolean {
    return this.words.length === 0 && this.phrases.length === 0;
  }

  /** Match types of a word token: phrases first, then single words (never for stop words). */
  *match(token: Token): Generator<MatchType> {
    for (const p of this.phrases) {
      const m = continuePhrase(p.words, p.ids, token);
      if (m) yield m;
    }
    if (token.kind === 'stopWord') return;
    for (const lw of this.words) {
      for (const w of lw.words) {
        if (lw.isPrefix && token.lemma.startsWith(w)) {
          const chars = Math.min(charLength(w), lw.originalChars);
          yield { kind: 'full', charCount: originalChars(token, chars), ids: lw.ids };
          return;
        }
        if (token.lemma === w) {
          yield { kind: 'full', charCount: token.charEnd - token.charStart, ids: lw.ids };
          return;
        }
      }
    }
  }
}
