// Dictionary word segmentation for scripts written without spaces.
//
// The reference uses jieba (Chinese), lindera (Japanese) and dictionary
// segmenters (Thai, Khmer). ICU's word break iterator, exposed as
// Intl.Segmenter, ships comparable dictionaries for Chinese/Japanese, Thai,
// Lao, Khmer and Burmese, so it is used instead; word boundaries will differ
// from the reference in places, but both index and query go through the same
// segmenter, so matching stays consistent.

import { SCRIPT } from './char-tables.js';

const segmenters = new Map<string, Intl.Segmenter>();

function segmenterFor(locale: string): Intl.Segmenter {
  let s = segmenters.get(locale);
  if (s === undefined) {
    s = new Intl.Segmenter(locale, { granularity: 'word' });
    segmenters.set(locale, s);
  }
  return s;
}

/** What the caller knows about the text's languages, from the `locales` option. */
export interface CjHint {
  /** Some requested locale is Japanese. */
  japanese: boolean;
  /** Some requested locale is Mandarin Chinese. */
  chinese: boolean;
}

function hasKana(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x3040 && c <= 0x30ff) return true;
  }
  return false;
}

/**
 * Picks the ICU locale for a run. For Han text the language is ambiguous: an
 * explicit locale wins; otherwise (like the reference's detector) the presence
 * of kana means Japanese.
 */
export function segmenterLocale(
  text: string, start: number, end: number, script: number, hint: CjHint,
): string {
  switch (script) {
    case SCRIPT.THAI: return 'th';
    case SCRIPT.LAO: return 'lo';
    case SCRIPT.KHMER: return 'km';
    case SCRIPT.MYANMAR: return 'my';
    default:
      if (hint.japanese && !hint.chinese) return 'ja';
      if (hint.chinese && !hint.japanese) return 'zh';
      return hasKana(text, start, end) ? 'ja' : 'zh';
  }
}

/**
 * Calls `emit(start, end)` (absolute UTF-16 offsets into `text`) for each
 * segment of text[start, end). Every segment is reported, word-like or not:
 * the run holds no separators, and the reference also keeps such pieces.
 */
export function segmentRun(
  text: string, start: number, end: number, script: number, hint: CjHint,
  emit: (start: number, end: number) => void,
): void {
  const locale = segmenterLocale(text, start, end, script, hint);
  const run = text.slice(start, end);
  for (const seg of segmenterFor(locale).segment(run)) {
    const s = start + seg.index;
    emit(s, s + seg.segment.length);
  }
}
