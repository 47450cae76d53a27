// Finds the query's matches in one text value and produces its highlighted and/or
// cropped form and the byte bounds of `_matchesPosition`, following the reference's
// matcher: phrases must match word after word, a prefix highlights only the typed part.

import type { Token, Tokenizer } from '../tokenizer/index.js';
import { cropWindow } from './crop.js';
import { continuePhrase, type MatchingWords } from './matching-words.js';

export interface Match {
  /** Characters highlighted from the first token's start. */
  charCount: number;
  /** Query term ids the match stands for. */
  ids: number[];
  firstToken: number;
  lastToken: number;
  firstWord: number;
  lastWord: number;
}

export interface FormatOptions {
  highlight: boolean;
  /** Words to keep around the matches, or null for no cropping. */
  crop: number | null;
  preTag: string;
  postTag: string;
  cropMarker: string;
}

/** UTF-16 offset of each code point offset, for texts with characters outside the BMP. */
function unitOffsets(text: string): ((cp: number) => number) {
  let astral = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      astral = true;
      break;
    }
  }
  if (!astral) return (cp) => cp;
  const map: number[] = [];
  let i = 0;
  for (const ch of text) {
    map.push(i);
    i += ch.length;
  }
  map.push(i);
  return (cp) => map[cp] ?? text.length;
}

export class TextMatcher {
  readonly tokens: Token[];
  readonly matches: Match[] = [];
  private readonly toUnit: (cp: number) => number;

  constructor(
    readonly text: string,
    tokenizer: Tokenizer,
    words: MatchingWords,
    locales: string[] | null,
  ) {
    this.tokens = tokenizer.tokenize(text, locales ? { locales } : undefined);
    this.toUnit = unitOffsets(text);
    if (!words.isEmpty) this.compute(words);
  }

  private compute(words: MatchingWords): void {
    const wordTokens: { tok: number; word: number }[] = [];
    this.tokens.forEach((t, i) => {
      if (t.kind !== 'separator') wordTokens.push({ tok: i, word: wordTokens.length });
    });
    for (let k = 0; k < wordTokens.length; k++) {
      const { tok, word } = wordTokens[k]!;
      const token = this.tokens[tok]!;
      for (const m of words.match(token)) {
        if (m.kind === 'full') {
          this.matches.push({ charCount: m.charCount, ids: m.ids, firstToken: tok, lastToken: tok, firstWord: word, lastWord: word });
          break;
        }
        // A phrase: the following words must complete it.
        let rest = m.rest;
        let done = false;
        for (let j = k + 1; j < wordTokens.length; j++) {
          const next = this.tokens[wordTokens[j]!.tok]!;
          const step = continuePhrase(rest, m.ids, next);
          if (!step) break;
          if (step.kind === 'full') {
            this.matches.push({
              charCount: next.charEnd - token.charStart,
              ids: m.ids,
              firstToken: tok,
              lastToken: wordTokens[j]!.tok,
              firstWord: word,
              lastWord: wordTokens[j]!.word,
            });
            k = j;
            done = true;
            break;
          }
          rest = step.rest;
        }
        if (done) break;
      }
    }
  }

  /** Byte length of a match: `charCount` characters from its first token. */
  private byteLength(m: Match): number {
    const start = this.toUnit(this.tokens[m.firstToken]!.charStart);
    const end = this.toUnit(this.tokens[m.lastToken]!.charEnd);
    const slice = this.text.slice(start, end);
    let chars = 0;
    let bytes = 0;
    for (const ch of slice) {
      if (chars++ >= m.charCount) break;
      bytes += Buffer.byteLength(ch);
    }
    return bytes;
  }

  /** `_matchesPosition` entries: byte offset and byte length of each match. */
  bounds(): { start: number; length: number }[] {
    return this.matches.map((m) => ({ start: this.tokens[m.firstToken]!.byteStart, length: this.byteLength(m) }));
  }

  format(opts: FormatOptions): string {
    const text = this.text;
    const toUnit = this.toUnit;
    if (!opts.highlight && opts.crop === null) return text;
    let start = 0;
    let end = text.length;
    if (opts.crop !== null && opts.crop > 0) {
      const [a, b] = cropWindow(this.tokens, this.matches, opts.crop);
      start = a === null ? 0 : toUnit(this.tokens[a]!.charEnd);
      end = b === null ? text.length : toUnit(this.tokens[b]!.charStart);
    }
    let out = '';
    if (start > 0 && opts.cropMarker) out += opts.cropMarker;
    let at = start;
    if (opts.highlight) {
      for (const m of this.matches) {
        let ms = toUnit(this.tokens[m.firstToken]!.charStart);
        let me = toUnit(this.tokens[m.lastToken]!.charEnd);
        if (me < start || ms > end) continue;
        ms = Math.max(ms, start);
        me = Math.min(me, end);
        if (at < ms) out += text.slice(at, ms);
        // The highlight covers `charCount` characters; the rest of a prefix match follows it.
        let hl = ms;
        for (let c = 0; c < m.charCount && hl < me; c++) {
          const code = text.charCodeAt(hl);
          hl += code >= 0xd800 && code <= 0xdbff ? 2 : 1;
        }
        out += opts.preTag + text.slice(ms, hl) + opts.postTag;
        if (hl < me) out += text.slice(hl, me);
        at = me;
      }
    }
    if (at < end) out += text.slice(at, end);
    if (end < text.length && opts.cropMarker) out += opts.cropMarker;
    return out;
  }
}
