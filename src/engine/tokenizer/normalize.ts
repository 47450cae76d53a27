// Word normalization, following the reference pipeline order:
//   NFKD → (Swedish recomposition) → control-char removal → [classification]
//   → lowercase + character conversions → Greek final sigma → mark removal.
// Classification (stop words) happens on the intermediate form, which is why
// the pipeline is split in two halves: `preNormalize` and `lossyNormalize`.

import { SCRIPT, SCRIPT_TABLE, scriptOf, stripsMarks } from './char-tables.js';

// Control characters (Cc) that are not white space: the reference keeps
// white-space controls (tab, LF, VT, FF, CR, NEL) and drops the others.
const CONTROL_RE = /[\u0000-\u0008\u000e-\u001f\u007f-\u0084\u0086-\u009f]/g;
const HAS_CONTROL_RE = /[\u0000-\u0008\u000e-\u001f\u007f-\u0084\u0086-\u009f]/;

// Conversions applied after lowercasing (ligatures, Arabic letter variants,
// typographic apostrophes, Vietnamese/Icelandic d-bar and eth, Turkish dotless i).
const CONVERTED: Readonly<Record<string, string>> = {
  'æ': 'ae', 'œ': 'oe', 'ð': 'd', 'đ': 'd', 'ı': 'i',
  '\u0629': '\u0647', '\u0640': '', '\u0671': '\u0627', '\u0649': '\u064a',
  '\u2018': "'", '\u2019': "'", '\u201b': "'",
};
const CONVERT_RE = /[æœðđı\u0629\u0640\u0671\u0649\u2018\u2019\u201b]/g;
const HAS_CONVERT_RE = /[æœðđı\u0629\u0640\u0671\u0649\u2018\u2019\u201b]/;
const convertChar = (c: string): string => CONVERTED[c] ?? c;

const MARK_RE = /\p{Mn}/gu;
const HAS_MARK_RE = /\p{Mn}/u;

const SWEDISH_RE = /([aAoO])\u0308|([aA])\u030a/g;
const swedishRecompose = (s: string): string => s.replace(SWEDISH_RE, (m) => m.normalize('NFC'));

/** True when every UTF-16 unit is ASCII (the common fast path). */
export function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/**
 * First half of the pipeline: compatibility decomposition and control-char
 * removal. Stop words are matched against this (case-sensitive) form.
 */
export function preNormalize(raw: string, script: number = SCRIPT.LATIN, swedish = false): string {
  let s = raw;
  if (!isAscii(s)) {
    s = s.normalize('NFKD');
    if (swedish && script === SCRIPT.LATIN) s = swedishRecompose(s);
  }
  if (HAS_CONTROL_RE.test(s)) s = s.replace(CONTROL_RE, '');
  return s;
}

/**
 * Second ("lossy") half: lowercase, character conversions, Greek final sigma,
 * and non-spacing-mark removal for scripts where marks are accents.
 */
export function lossyNormalize(pre: string, script: number): string {
  let s = pre;
  if (isAscii(s)) return s.toLowerCase();
  // JS lowercases a word-final capital sigma to 'ς' (contextual rule) whereas the
  // reference lowercases per character; map it first to get per-character semantics.
  if (s.indexOf('\u03a3') !== -1) s = s.replace(/\u03a3/g, '\u03c3');
  s = s.toLowerCase();
  if (HAS_CONVERT_RE.test(s)) s = s.replace(CONVERT_RE, convertChar);
  if (script === SCRIPT.GREEK && s.endsWith('\u03c2')) s = s.slice(0, -1) + '\u03c3';
  if (stripsMarks(script) && HAS_MARK_RE.test(s)) s = s.replace(MARK_RE, '');
  return s;
}

/** Script of a word: the script of its first character that has one. */
export function detectScript(word: string): number {
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    let s: number;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < word.length) {
      s = scriptOf(word.codePointAt(i)!);
      i++;
    } else {
      s = SCRIPT_TABLE[c]!;
    }
    if (s !== SCRIPT.OTHER) return s;
  }
  return SCRIPT.OTHER;
}

export interface NormalizeOptions {
  /** Locales of the text (ISO-639-3 or -1); only Swedish changes normalization. */
  locales?: readonly string[] | null;
}

/**
 * Normalizes one word the way the index stores it: "Café" → "cafe",
 * "Straße" → "straße", "Œuvre" → "oeuvre". Does not split the input.
 */
export function normalize(word: string, options?: NormalizeOptions): string {
  if (isAscii(word)) {
    const w = HAS_CONTROL_RE.test(word) ? preNormalize(word) : word;
    return w.toLowerCase();
  }
  const script = detectScript(word);
  const swedish = !!options?.locales?.some((l) => l === 'swe' || l === 'sv');
  return lossyNormalize(preNormalize(word, script, swedish), script);
}

/**
 * Facet/filter value normalization: trim, NFKD, lowercase. Accents are not
 * stripped (decomposed marks stay), unlike searchable words.
 */
export function normalizeFacet(value: string): string {
  const t = value.trim();
  return isAscii(t) ? t.toLowerCase() : t.normalize('NFKD').toLowerCase();
}
