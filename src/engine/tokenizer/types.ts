// Public types and limits of the tokenizer, shared by its modules.

/** Position gap a hard separator puts between two words (the reference's MAX_DISTANCE). */
export const MAX_DISTANCE = 4;
/** Words whose normalized UTF-8 form is longer than this are not indexed. */
export const MAX_WORD_BYTES = 250;
/** The reference indexes at most this many positions per attribute. */
export const MAX_POSITION_PER_ATTRIBUTE = 65536;

export interface TokenizerSettings {
  /** Strings added to the default separators (may be several characters long). */
  separatorTokens?: readonly string[] | null;
  /** Strings removed from the default separators. */
  nonSeparatorTokens?: readonly string[] | null;
  /** Strings that must stay single tokens, e.g. "J. R. R.", "C#". */
  dictionary?: readonly string[] | null;
  /** Words classified as stop words (case-sensitive, like the reference). */
  stopWords?: Iterable<string> | null;
}

export interface TokenizeOptions {
  /** ISO-639-3 or -1 codes restricting the languages of the text. */
  locales?: readonly string[] | null;
}

export type TokenKind = 'word' | 'stopWord' | 'separator';
export type SeparatorKind = 'soft' | 'hard';

export interface Token {
  kind: TokenKind;
  /** Normalized form (what is indexed / matched). */
  lemma: string;
  /** The slice of the input this token covers. */
  original: string;
  /** Offsets in Unicode code points. */
  charStart: number;
  charEnd: number;
  /** Offsets in UTF-8 bytes (what `_matchesPosition` reports). */
  byteStart: number;
  byteEnd: number;
  /** Word position in the text; separators carry the position of the preceding word. */
  position: number;
  /** Only on separators. */
  separatorKind?: SeparatorKind;
}

/** Callback of the indexing path: one call per indexable word. */
export type WordCallback = (lemma: string, position: number) => void;

export interface IndexedWord {
  lemma: string;
  position: number;
}

/** Receives the raw segmentation; sinks add normalization and positions. */
export interface ScanSink {
  word(start: number, end: number, script: number, flags: number): void;
  separator(start: number, end: number, kind: number): void;
}
