// Turns the tokens of `q` into located query terms, the way the reference does it:
// words get consecutive query positions (a hard separator adds 7 more), only the first
// ten terms count, the last word is a prefix unless anything follows it, stop words are
// dropped unless last, double quotes delimit phrases (a hard separator splits one), and
// a `-` preceded by white space (or at the start) negates the next word or phrase.

import type { Token } from '../tokenizer/index.js';

export interface WordTerm {
  kind: 'word';
  lemma: string;
  /** Query position of the word. */
  position: number;
  isPrefix: boolean;
}

export interface PhraseTerm {
  kind: 'phrase';
  /** Phrase words; null for a stop word, which still takes a position. */
  words: (string | null)[];
  start: number;
  end: number;
}

export type QueryTerm = WordTerm | PhraseTerm;

export interface ParsedQuery {
  terms: QueryTerm[];
  negativeWords: string[];
  negativePhrases: (string | null)[][];
}

export interface ParseOptions {
  /** Terms considered (10 in the reference). */
  wordsLimit: number;
  /** False when `prefixSearch` is `disabled`. */
  prefixAllowed: boolean;
}

/** Tokens read from a query; the rest is ignored, as in the reference. */
export const MAX_QUERY_TOKENS = 1000;
const HARD_SEPARATOR_GAP = 7;

class PhraseBuilder {
  words: (string | null)[] = [];
  start = -1;
  end = -1;

  push(token: Token, position: number): void {
    if (this.isEmpty()) this.start = position;
    this.end = position;
    this.words.push(token.kind === 'stopWord' ? null : token.lemma);
  }

  isEmpty(): boolean {
    return this.words.every((w) => w === null);
  }

  build(): PhraseTerm | null {
    if (this.isEmpty()) return null;
    return { kind: 'phrase', words: this.words, start: this.start, end: this.end };
  }
}

function countQuotes(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) === 34) n++;
  return n;
}

export function parseQuery(allTokens: readonly Token[], opts: ParseOptions): ParsedQuery {
  const tokens = allTokens.length > MAX_QUERY_TOKENS ? allTokens.slice(0, MAX_QUERY_TOKENS) : allTokens;
  const terms: QueryTerm[] = [];
  const negativeWords: string[] = [];
  const negativePhrases: (string | null)[][] = [];
  let phrase: PhraseBuilder | null = null;
  let negativePhrase = false;
  let negativeNext = false;
  let whitespaceBefore = true;
  let position = -1;

  const closePhrase = (p: PhraseBuilder): void => {
    const built = p.build();
    if (!built) return;
    if (negativePhrase) negativePhrases.push(built.words);
    else terms.push(built);
  };

  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.lemma.length === 0) continue;
    if (terms.length >= opts.wordsLimit) break;
    if (token.kind === 'word' || token.kind === 'stopWord') {
      position++;
      if (phrase) phrase.push(token, position);
      else if (negativeNext) {
        negativeWords.push(token.lemma);
        negativeNext = false;
      } else if (i + 1 < tokens.length) {
        if (token.kind === 'word') terms.push({ kind: 'word', lemma: token.lemma, position, isPrefix: false });
      } else {
        terms.push({ kind: 'word', lemma: token.lemma, position, isPrefix: opts.prefixAllowed });
      }
    } else {
      const hard = token.separatorKind === 'hard';
      if (hard) position += HARD_SEPARATOR_GAP;
      if (hard && phrase) {
        // A hard separator inside quotes ends the phrase and starts a new one.
        closePhrase(phrase);
        phrase = new PhraseBuilder();
      }
      let quotes = countQuotes(token.lemma);
      if (quotes > 0) {
        if (phrase) {
          quotes--;
          closePhrase(phrase);
          negativePhrase = false;
          phrase = null;
        }
        if (quotes % 2 === 1) {
          negativePhrase = negativeNext;
          phrase = new PhraseBuilder();
        }
      }
      negativeNext = phrase === null && token.lemma === '-' && whitespaceBefore;
    }
    whitespaceBefore = /\s$/u.test(token.lemma);
  }
  // An unclosed quote runs to the end of the query.
  if (phrase) closePhrase(phrase);
  return { terms, negativeWords, negativePhrases };
}
