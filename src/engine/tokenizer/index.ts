// Public surface of the tokenizer module.

export {
  MAX_DISTANCE, MAX_POSITION_PER_ATTRIBUTE, MAX_WORD_BYTES,
} from './types.js';
export type {
  IndexedWord, SeparatorKind, Token, TokenKind, TokenizeOptions, TokenizerSettings, WordCallback,
} from './types.js';
export { Tokenizer, getDefaultTokenizer } from './tokenizer.js';
export { normalize, normalizeFacet } from './normalize.js';
export type { NormalizeOptions } from './normalize.js';
export {
  ISO639_1_TO_3, ISO639_3_TO_1, SUPPORTED_LOCALES, canonicalLocales, isSupportedLocale,
  toIso639_1, toIso639_3,
} from './locales.js';
export {
  DEFAULT_TYPO_THRESHOLDS, TypoMatcher, boundedDamerau, charCount, damerauLevenshtein, isNumeric,
  typoBudget,
} from './typo.js';
export type { TypoMatcherOptions, TypoThresholds } from './typo.js';
