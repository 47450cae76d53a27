// Consumers of the raw segmentation: word normalization + stop-word
// classification, position assignment, and the full Token builder.

import { SEP_HARD } from './char-tables.js';
import { isAscii, lossyNormalize, preNormalize } from './normalize.js';
import { MAX_DISTANCE, ScanSink, Token } from './types.js';

// Facts the scanner gathers about a word while walking it, so that the common
// ASCII word needs no extra pass: an ASCII word without upper case or control
// characters is already its own lemma.
export const F_UPPER = 1;
export const F_CTRL = 2;
export const F_NON_ASCII = 4;
/** The run contains characters of a script that needs dictionary segmentation. */
export const F_SEGMENT = 8;
/** "Unknown content": forces the complete normalization pipeline. */
export const F_FULL = F_UPPER | F_CTRL | F_NON_ASCII;

/** Normalizes words and remembers whether the last one was a stop word. */
export class WordNormalizer {
  lastWasStopWord = false;

  constructor(private readonly stopWords: ReadonlySet<string>) {}

  /** Lemma of `raw` ('' when nothing indexable is left). */
  lemma(raw: string, script: number, flags: number, swedish: boolean): string {
    let pre: string;
    let lemma: string;
    if ((flags & (F_NON_ASCII | F_CTRL)) === 0) {
      pre = raw;
      lemma = (flags & F_UPPER) !== 0 ? raw.toLowerCase() : raw;
    } else {
      pre = preNormalize(raw, script, swedish);
      // White space can only be inside a word when a setting made it a non-separator;
      // the reference trims lemmas before indexing them.
      lemma = lossyNormalize(pre, script).trim();
    }
    this.lastWasStopWord = this.stopWords.size > 0 && this.stopWords.has(pre);
    return lemma;
  }
}

const NONE = 0;
const WORD = 1;
const SOFT = 2;
const HARD = 3;

/**
 * Word positions as the reference's indexer computes them: separators before
 * the first word are ignored, the first word is at 0, each following word is
 * +1, or +MAX_DISTANCE when a hard separator occurred since the previous word.
 */
export class PositionTracker {
  position = 0;
  private prev = NONE;

  word(): number {
    if (this.prev === HARD) this.position += MAX_DISTANCE;
    else if (this.prev !== NONE) this.position += 1;
    this.prev = WORD;
    return this.position;
  }

  separator(kind: number): void {
    if (this.prev === NONE) return;
    if (kind === SEP_HARD) this.prev = HARD;
    else if (this.prev !== HARD) this.prev = SOFT;
  }
}

const QUOTES_RE = /[\u2018\u2019\u201b]/g;

/** Lemma of a separator: decomposed and lowercased, typographic apostrophes unified. */
export function separatorLemma(raw: string): string {
  if (isAscii(raw)) return raw;
  return raw.normalize('NFKD').toLowerCase().replace(QUOTES_RE, "'");
}

/** Builds full Token objects with code point and UTF-8 byte offsets. */
export class TokenBuilder implements ScanSink {
  readonly tokens: Token[] = [];
  private readonly positions = new PositionTracker();
  // Offset cursor: UTF-16 index and the matching code point / byte offsets.
  private cu = 0;
  private chars = 0;
  private bytes = 0;

  constructor(
    private readonly text: string,
    private readonly normalizer: WordNormalizer,
    private readonly swedish: boolean,
  ) {}

  private advance(to: number): void {
    const text = this.text;
    let i = this.cu;
    let chars = this.chars;
    let bytes = this.bytes;
    while (i < to) {
      const c = text.charCodeAt(i);
      if (c < 0x80) bytes += 1;
      else if (c < 0x800) bytes += 2;
      else if (c >= 0xd800 && c <= 0xdbff && i + 1 < to) {
        const d = text.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          bytes += 4;
          chars += 1;
          i += 2;
          continue;
        }
        bytes += 3;
      } else bytes += 3;
      chars += 1;
      i += 1;
    }
    this.cu = i;
    this.chars = chars;
    this.bytes = bytes;
  }

  word(start: number, end: number, script: number, flags: number): void {
    const original = this.text.slice(start, end);
    const lemma = this.normalizer.lemma(original, script, flags, this.swedish);
    if (lemma.length === 0) return;
    const position = this.positions.word();
    this.advance(start);
    const charStart = this.chars;
    const byteStart = this.bytes;
    this.advance(end);
    this.tokens.push({
      kind: this.normalizer.lastWasStopWord ? 'stopWord' : 'word',
      lemma, original, charStart, charEnd: this.chars, byteStart, byteEnd: this.bytes, position,
    });
  }

  separator(start: number, end: number, kind: number): void {
    this.positions.separator(kind);
    const original = this.text.slice(start, end);
    this.advance(start);
    const charStart = this.chars;
    const byteStart = this.bytes;
    this.advance(end);
    this.tokens.push({
      kind: 'separator', lemma: separatorLemma(original), original,
      charStart, charEnd: this.chars, byteStart, byteEnd: this.bytes,
      position: this.positions.position,
      separatorKind: kind === SEP_HARD ? 'hard' : 'soft',
    });
  }
}
