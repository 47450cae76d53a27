// Per-code-point lookup tables shared by every tokenizer instance.
//
// The tokenizer visits every character of every indexed document, so the
// classification of a character (script, separator kind) must be a single
// typed-array read for the BMP. Tables are built once at module load from
// Unicode property regexes (a few milliseconds) instead of being shipped as
// large literal data.

/** Script ids. 0 (OTHER) is digits, punctuation, symbols, combining marks... */
export const SCRIPT = {
  OTHER: 0,
  LATIN: 1,
  CYRILLIC: 2,
  ARABIC: 3,
  DEVANAGARI: 4,
  HEBREW: 5,
  ETHIOPIC: 6,
  GEORGIAN: 7,
  BENGALI: 8,
  HANGUL: 9,
  CJ: 10,
  GREEK: 11,
  KANNADA: 12,
  TAMIL: 13,
  THAI: 14,
  GUJARATI: 15,
  GURMUKHI: 16,
  TELUGU: 17,
  MALAYALAM: 18,
  ORIYA: 19,
  MYANMAR: 20,
  SINHALA: 21,
  KHMER: 22,
  LAO: 23,
} as const;

export type ScriptId = (typeof SCRIPT)[keyof typeof SCRIPT];

/** Separator kinds as stored in the tables. */
export const SEP_NONE = 0;
export const SEP_SOFT = 1;
export const SEP_HARD = 2;

// Script ranges follow the reference's per-character script detection (which
// deliberately differs from the Unicode Script property: e.g. Latin-1
// punctuation counts as Latin and the fullwidth-forms block as Hangul). Earlier
// entries win where ranges overlap. Lao is not known to the reference; it is
// added so that Lao text can be dictionary-segmented like Thai.
const SCRIPT_RANGES: ReadonlyArray<readonly [ScriptId, ReadonlyArray<readonly [number, number]>]> = [
  [SCRIPT.LATIN, [[0x41, 0x5a], [0x61, 0x7a], [0x80, 0x24f], [0x250, 0x2af], [0x1d00, 0x1dbf],
    [0x1e00, 0x1eff], [0x2100, 0x214f], [0x2c60, 0x2c7f], [0xa720, 0xa7ff], [0xab30, 0xab6f]]],
  [SCRIPT.CYRILLIC, [[0x400, 0x484], [0x487, 0x52f], [0x2de0, 0x2dff], [0xa640, 0xa69d],
    [0x1d2b, 0x1d2b], [0x1d78, 0x1d78], [0xa69f, 0xa69f]]],
  [SCRIPT.ARABIC, [[0x600, 0x6ff], [0x750, 0x7ff], [0x8a0, 0x8ff], [0xfb50, 0xfdff],
    [0xfe70, 0xfeff], [0x10e60, 0x10e7f], [0x1ee00, 0x1eeff]]],
  [SCRIPT.DEVANAGARI, [[0x900, 0x97f], [0xa8e0, 0xa8ff], [0x1cd0, 0x1cff]]],
  [SCRIPT.HEBREW, [[0x590, 0x5ff]]],
  [SCRIPT.ETHIOPIC, [[0x1200, 0x139f], [0x2d80, 0x2ddf], [0xab00, 0xab2f]]],
  [SCRIPT.GEORGIAN, [[0x10a0, 0x10ff]]],
  [SCRIPT.BENGALI, [[0x980, 0x9ff]]],
  [SCRIPT.HANGUL, [[0xac00, 0xd7af], [0x1100, 0x11ff], [0x3130, 0x318f], [0x3200, 0x32ff],
    [0xa960, 0xa97f], [0xd7b0, 0xd7ff], [0xff00, 0xffef]]],
  [SCRIPT.CJ, [[0x3040, 0x309f], [0x30a0, 0x30ff], [0x2e80, 0x2e99], [0x2e9b, 0x2ef3],
    [0x2f00, 0x2fd5], [0x3005, 0x3005], [0x3007, 0x3007], [0x3021, 0x3029], [0x3038, 0x303b],
    [0x3400, 0x4db5], [0x4e00, 0x9fcc], [0xf900, 0xfa6d], [0xfa70, 0xfad9]]],
  [SCRIPT.GREEK, [[0x370, 0x3ff]]],
  [SCRIPT.KANNADA, [[0xc80, 0xcff]]],
  [SCRIPT.TAMIL, [[0xb80, 0xbff]]],
  [SCRIPT.THAI, [[0xe00, 0xe7f]]],
  [SCRIPT.GUJARATI, [[0xa80, 0xaff]]],
  [SCRIPT.GURMUKHI, [[0xa00, 0xa7f]]],
  [SCRIPT.TELUGU, [[0xc00, 0xc7f]]],
  [SCRIPT.MALAYALAM, [[0xd00, 0xd7f]]],
  [SCRIPT.ORIYA, [[0xb00, 0xb7f]]],
  [SCRIPT.MYANMAR, [[0x1000, 0x109f]]],
  [SCRIPT.SINHALA, [[0xd80, 0xdff]]],
  [SCRIPT.KHMER, [[0x1780, 0x17ff], [0x19e0, 0x19ff]]],
  [SCRIPT.LAO, [[0xe80, 0xeff]]],
];

// Sentence-level ("hard") separators of the reference, as code point ranges.
// Multi-character hard separators (". ", ", ", "។ល។") are handled as patterns.
const HARD_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x0, 0x0], [0x21, 0x21], [0x3b, 0x3b], [0x3f, 0x3f], [0xa1, 0xa1], [0xa7, 0xa7], [0xb4, 0xb4],
  [0xb6, 0xb6], [0xbf, 0xbf], [0x37e, 0x37e], [0x55c, 0x55e], [0x589, 0x589], [0x5c3, 0x5c3],
  [0x60c, 0x60c], [0x61b, 0x61b], [0x61f, 0x61f], [0x6d4, 0x6d4], [0x700, 0x709], [0x7f7, 0x7f9],
  [0x830, 0x835], [0x838, 0x83e], [0x85e, 0x85e], [0x964, 0x965], [0xdf4, 0xdf4], [0xe5a, 0xe5b],
  [0xf04, 0xf0a], [0xf0d, 0xf12], [0xf14, 0xf14], [0xfd0, 0xfd4], [0x104a, 0x104b], [0x10fb, 0x10fb],
  [0x1362, 0x1368], [0x169b, 0x169c], [0x16eb, 0x16ed], [0x1735, 0x1736], [0x17d4, 0x17d6],
  [0x17d8, 0x17d8], [0x17da, 0x17da], [0x1800, 0x1806], [0x1808, 0x1809], [0x1944, 0x1945],
  [0x1a1f, 0x1a1f], [0x1aa8, 0x1aad], [0x1b5a, 0x1b60], [0x1bfc, 0x1bff], [0x1c3b, 0x1c3f],
  [0x1c7e, 0x1c7f], [0x1cc0, 0x1cc7], [0x2024, 0x2026], [0x203b, 0x203d], [0x2047, 0x2049],
  [0x204f, 0x204f], [0x2056, 0x2056], [0x205a, 0x205a], [0x2cf9, 0x2cfc], [0x2cfe, 0x2cfe],
  [0x2e18, 0x2e18], [0x2e2e, 0x2e2e], [0x2e41, 0x2e41], [0x3001, 0x3002], [0xa4fe, 0xa4ff],
  [0xa60d, 0xa60f], [0xa6f2, 0xa6f7], [0xa876, 0xa877], [0xa8ce, 0xa8cf], [0xa92f, 0xa92f],
  [0xa95f, 0xa95f], [0xa9c3, 0xa9cd], [0xaa5c, 0xaa5f], [0xaadf, 0xaadf], [0xaaf0, 0xaaf1],
  [0xabeb, 0xabeb], [0xfe10, 0xfe16], [0xfe19, 0xfe19], [0xfe30, 0xfe30], [0xfe45, 0xfe45],
  [0xfe50, 0xfe52], [0xfe54, 0xfe57], [0xff01, 0xff01], [0xff0c, 0xff0c], [0xff0e, 0xff0e],
  [0xff1a, 0xff1b], [0xff1f, 0xff1f], [0xff61, 0xff61], [0xff64, 0xff64], [0x10857, 0x10857],
  [0x10a50, 0x10a58], [0x10af0, 0x10af5], [0x10b3a, 0x10b3f], [0x10b99, 0x10b9c],
  [0x10f55, 0x10f59], [0x11047, 0x1104d], [0x110be, 0x110c1], [0x11140, 0x11143],
  [0x11175, 0x11175], [0x111c5, 0x111c6], [0x111cd, 0x111cd], [0x111de, 0x111df],
  [0x11238, 0x11239], [0x1123b, 0x1123c], [0x112a9, 0x112a9], [0x1144b, 0x1144d],
  [0x1145a, 0x1145a], [0x115c2, 0x115c3], [0x115c9, 0x115d7], [0x11641, 0x11642],
  [0x11660, 0x1166c], [0x1173c, 0x1173e], [0x11944, 0x11944], [0x11946, 0x11946],
  [0x11a3f, 0x11a46], [0x11a9a, 0x11a9c], [0x11a9e, 0x11aa2], [0x11c41, 0x11c42],
  [0x11c70, 0x11c71], [0x11ef7, 0x11ef8], [0x11fff, 0x11fff], [0x12471, 0x12474],
  [0x16a6e, 0x16a6f], [0x16af5, 0x16af5], [0x16b37, 0x16b39], [0x16b44, 0x16b44],
  [0x16e97, 0x16e9a], [0x1bc9f, 0x1bc9f], [0x1da87, 0x1da8a], [0x1e95e, 0x1e95f],
];

/** Default multi-character separators (all hard). */
export const DEFAULT_MULTI_SEPARATORS: readonly string[] = ['. ', ', ', '\u17d4\u179b\u17d4'];

// Besides Unicode punctuation and spaces, the reference lists these extra
// characters: NUL, tab/CR/LF, backtick (markdown), '+' and a subset of the math
// symbols (Sm). '<', '=', '>', '|', '~', '^', '$' are intentionally absent.
const EXTRA_SEPARATORS: ReadonlyArray<readonly [number, number]> = [
  [0x0, 0x0], [0x9, 0x9], [0xa, 0xa], [0xd, 0xd], [0x60, 0x60], [0x2b, 0x2b], [0xb1, 0xb1],
  [0xd7, 0xd7], [0xf7, 0xf7], [0x2212, 0x22ff],
];

const PUNCT_OR_SPACE = /[\p{P}\p{Z}]/u;

const scriptTable = new Uint8Array(0x10000);
const defaultSepTable = new Uint8Array(0x10000);
const astralScripts: Array<readonly [number, number, ScriptId]> = [];
const astralHard: Array<readonly [number, number]> = [];

function buildTables(): void {
  for (let k = SCRIPT_RANGES.length - 1; k >= 0; k--) {
    const [id, ranges] = SCRIPT_RANGES[k]!;
    for (const [lo, hi] of ranges) {
      if (lo > 0xffff) {
        astralScripts.push([lo, hi, id]);
        continue;
      }
      scriptTable.fill(id, lo, hi + 1);
    }
  }
  // One global regex pass over the whole BMP is much cheaper than 65k tests.
  const chars: string[] = [];
  for (let c = 0; c < 0x10000; c++) {
    chars.push(c >= 0xd800 && c <= 0xdfff ? 'a' : String.fromCharCode(c));
  }
  const all = chars.join('');
  const re = /[\p{P}\p{Z}]/gu;
  let m: RegExpExecArray | null;
  while ((m = re.exec(all)) !== null) defaultSepTable[m.index] = SEP_SOFT;
  for (const [lo, hi] of EXTRA_SEPARATORS) defaultSepTable.fill(SEP_SOFT, lo, hi + 1);
  for (const [lo, hi] of HARD_RANGES) {
    if (lo > 0xffff) {
      astralHard.push([lo, hi]);
      continue;
    }
    // U+00B4 is a hard separator only when a setting makes it a separator.
    for (let c = lo; c <= hi; c++) if (defaultSepTable[c] !== SEP_NONE) defaultSepTable[c] = SEP_HARD;
  }
}
buildTables();

/** Script of a code point (BMP via table, astral via a short range scan). */
export function scriptOf(cp: number): ScriptId {
  if (cp < 0x10000) return scriptTable[cp] as ScriptId;
  for (const [lo, hi, id] of astralScripts) if (cp >= lo && cp <= hi) return id;
  return SCRIPT.OTHER;
}

/** Raw BMP script table, for hot loops that want to skip the function call. */
export const SCRIPT_TABLE: Readonly<Uint8Array> = scriptTable;

/** Default separator kind per BMP code unit (SEP_NONE / SEP_SOFT / SEP_HARD). */
export const DEFAULT_SEP_TABLE: Readonly<Uint8Array> = defaultSepTable;

function isHardCodePoint(cp: number): boolean {
  if (cp < 0x10000) {
    for (const [lo, hi] of HARD_RANGES) if (cp >= lo && cp <= hi) return true;
    return false;
  }
  for (const [lo, hi] of astralHard) if (cp >= lo && cp <= hi) return true;
  return false;
}

const astralSepCache = new Map<number, number>();

/** Default separator kind of an astral code point (cached; these are rare). */
export function defaultAstralSepKind(cp: number): number {
  let kind = astralSepCache.get(cp);
  if (kind === undefined) {
    kind = PUNCT_OR_SPACE.test(String.fromCodePoint(cp))
      ? (isHardCodePoint(cp) ? SEP_HARD : SEP_SOFT)
      : SEP_NONE;
    astralSepCache.set(cp, kind);
  }
  return kind;
}

/**
 * Kind a separator string gets when it is a separator at all: the reference
 * classifies by membership of the whole string in its hard list, so custom
 * multi-character separators are soft unless they are one of the listed ones.
 */
export function separatorKindOf(sep: string): number {
  if (sep === '. ' || sep === ', ' || sep === '\u17d4\u179b\u17d4') return SEP_HARD;
  const cp = sep.codePointAt(0);
  if (cp === undefined || sep.length !== (cp > 0xffff ? 2 : 1)) return SEP_SOFT;
  return isHardCodePoint(cp) ? SEP_HARD : SEP_SOFT;
}

/** Scripts whose runs are cut into words by a dictionary segmenter (no spaces). */
export function isDictionarySegmentedScript(s: number): boolean {
  return s === SCRIPT.CJ || s === SCRIPT.THAI || s === SCRIPT.LAO || s === SCRIPT.KHMER
    || s === SCRIPT.MYANMAR;
}

/**
 * Scripts whose words lose their non-spacing marks (accents) when normalized.
 * Elsewhere (Cyrillic, Indic scripts, CJK...) the decomposed marks are kept.
 */
export function stripsMarks(s: number): boolean {
  return s === SCRIPT.LATIN || s === SCRIPT.GREEK || s === SCRIPT.HEBREW || s === SCRIPT.THAI
    || s === SCRIPT.ARABIC;
}
