// The tokenizer: splits text into words and separators, normalizes words,
// classifies stop words and assigns word positions.
//
// Reference behaviour (charabia + milli) reproduced here:
// - text is cut into script runs first (a word never spans two scripts;
//   digits and punctuation join the surrounding run);
// - inside a run, separators and `dictionary` entries are found with
//   leftmost-longest matching on the original text (case-sensitive);
// - what lies between matches is one word, except for scripts written without
//   spaces, which go through a dictionary segmenter;
// - stop words are compared case-sensitively with the decomposed (NFKD) word;
// - positions: +1 per word, +MAX_DISTANCE after a hard separator.

import {
  DEFAULT_MULTI_SEPARATORS, DEFAULT_SEP_TABLE, SCRIPT_TABLE, SEP_HARD, SEP_NONE, SEP_SOFT,
  defaultAstralSepKind, isDictionarySegmentedScript, scriptOf, separatorKindOf,
} from './char-tables.js';
import { canonicalLocales } from './locales.js';
import { preNormalize } from './normalize.js';
import { CjHint, segmentRun } from './segment.js';
import {
  F_CTRL, F_FULL, F_NON_ASCII, F_SEGMENT, F_UPPER, PositionTracker, TokenBuilder, WordNormalizer,
} from './token-sinks.js';
import {
  IndexedWord, MAX_WORD_BYTES, ScanSink, SeparatorKind, Token, TokenizeOptions, TokenizerSettings,
  WordCallback,
} from './types.js';

interface Pattern {
  text: string;
  /** SEP_NONE for a dictionary word that is not also a separator. */
  sepKind: number;
}

/** Per-call context derived from the `locales` option. */
export interface ScanContext {
  hint: CjHint;
  swedish: boolean;
}

const DEFAULT_CONTEXT: ScanContext = { hint: { japanese: false, chinese: false }, swedish: false };

function contextFor(options: TokenizeOptions | undefined): ScanContext {
  const locales = canonicalLocales(options?.locales);
  if (locales === null) return DEFAULT_CONTEXT;
  return {
    hint: { japanese: locales.includes('jpn'), chinese: locales.includes('cmn') },
    swedish: locales.includes('swe'),
  };
}

export class Tokenizer {
  private readonly sepTable: Uint8Array;
  private readonly astralSep: Map<number, number>;
  private readonly patternStart: Uint8Array;
  private readonly patterns: Map<number, Pattern[]>;
  private readonly multiSeparators: Map<string, number>;
  private readonly normalizer: WordNormalizer;

  constructor(settings: TokenizerSettings = {}) {
    const add = (settings.separatorTokens ?? []).filter((s) => s.length > 0);
    const remove = new Set((settings.nonSeparatorTokens ?? []).filter((s) => s.length > 0));
    const dictionary = (settings.dictionary ?? []).filter((s) => s.length > 0);

    const singles = (s: string): number | undefined => {
      const cp = s.codePointAt(0)!;
      return s.length === (cp > 0xffff ? 2 : 1) ? cp : undefined;
    };

    // Single-character separators live in a lookup table (copied only if changed).
    this.astralSep = new Map();
    const singleChanges = add.some((s) => singles(s) !== undefined)
      || [...remove].some((s) => singles(s) !== undefined);
    this.sepTable = singleChanges ? new Uint8Array(DEFAULT_SEP_TABLE) : (DEFAULT_SEP_TABLE as Uint8Array);
    for (const s of add) {
      const cp = singles(s);
      if (cp === undefined || remove.has(s)) continue;
      const kind = separatorKindOf(s);
      if (cp < 0x10000) this.sepTable[cp] = kind;
      else this.astralSep.set(cp, kind);
    }
    for (const s of remove) {
      const cp = singles(s);
      if (cp === undefined) continue;
      if (cp < 0x10000) this.sepTable[cp] = SEP_NONE;
      else this.astralSep.set(cp, SEP_NONE);
    }

    // Multi-character separators and dictionary entries are matched as patterns.
    this.multiSeparators = new Map();
    for (const s of [...DEFAULT_MULTI_SEPARATORS, ...add]) {
      if (singles(s) === undefined && !remove.has(s)) this.multiSeparators.set(s, separatorKindOf(s));
    }
    this.patterns = new Map();
    this.patternStart = new Uint8Array(0x10000);
    const push = (text: string, sepKind: number): void => {
      const first = text.charCodeAt(0);
      let list = this.patterns.get(first);
      if (list === undefined) this.patterns.set(first, (list = []));
      if (!list.some((p) => p.text === text)) list.push({ text, sepKind });
      this.patternStart[first] = 1;
    };
    // Dictionary entries first: on equal length the reference prefers them.
    for (const d of dictionary) push(d, this.separatorKind(d));
    for (const [s, kind] of this.multiSeparators) push(s, kind);
    for (const list of this.patterns.values()) list.sort((a, b) => b.text.length - a.text.length);

    const stop = new Set<string>();
    for (const w of settings.stopWords ?? []) if (w.length > 0) stop.add(preNormalize(w, scriptOf(w.codePointAt(0)!)));
    this.normalizer = new WordNormalizer(stop);
  }

  /** Separator kind of a whole string under these settings, or SEP_NONE. */
  private separatorKind(s: string): number {
    const multi = this.multiSeparators.get(s);
    if (multi !== undefined) return multi;
    const cp = s.codePointAt(0);
    if (cp === undefined || s.length !== (cp > 0xffff ? 2 : 1)) return SEP_NONE;
    return this.singleSepKind(cp);
  }

  /** 'soft' / 'hard' when `s` is a separator under these settings, else null. */
  separatorKindName(s: string): SeparatorKind | null {
    const k = this.separatorKind(s);
    return k === SEP_HARD ? 'hard' : k === SEP_SOFT ? 'soft' : null;
  }

  private singleSepKind(cp: number): number {
    if (cp < 0x10000) return this.sepTable[cp]!;
    const custom = this.astralSep.get(cp);
    return custom !== undefined ? custom : defaultAstralSepKind(cp);
  }

  /** Full tokenization with offsets, kinds and positions (queries, highlighting). */
  tokenize(text: string, options?: TokenizeOptions): Token[] {
    const ctx = contextFor(options);
    const builder = new TokenBuilder(text, this.normalizer, ctx.swedish);
    this.scan(text, ctx, builder);
    return builder.tokens;
  }

  /**
   * Indexing path: calls `fn(lemma, position)` for every indexable word.
   * Stop words and over-long words consume a position but are not reported.
   */
  forEachWord(text: string, fn: WordCallback, options?: TokenizeOptions): void {
    const ctx = contextFor(options);
    const norm = this.normalizer;
    const pos = new PositionTracker();
    const swedish = ctx.swedish;
    this.scan(text, ctx, {
      word(start, end, script, flags) {
        const raw = text.slice(start, end);
        const lemma = norm.lemma(raw, script, flags, swedish);
        if (lemma.length === 0) return;
        const p = pos.word();
        if (norm.lastWasStopWord) return;
        if (lemma.length > 83 && Buffer.byteLength(lemma, 'utf8') > MAX_WORD_BYTES) return;
        fn(lemma, p);
      },
      separator(_start, _end, kind) {
        pos.separator(kind);
      },
    });
  }

  /** Same as {@link forEachWord}, collected into an array. */
  words(text: string, options?: TokenizeOptions): IndexedWord[] {
    const out: IndexedWord[] = [];
    this.forEachWord(text, (lemma, position) => out.push({ lemma, position }), options);
    return out;
  }

  /** Core segmentation loop: script runs, pattern/separator matching, interleaves. */
  private scan(text: string, ctx: ScanContext, sink: ScanSink): void {
    const n = text.length;
    const sepTable = this.sepTable;
    const patternStart = this.patternStart;
    let groupScript = 0;
    let interStart = 0;
    let flags = 0;
    let i = 0;
    // No closure over the loop's state: V8 would keep the variables it captures in a heap
    // context, and the loop reads them at every character (flushWord takes them instead).

    while (i < n) {
      const c = text.charCodeAt(i);
      let cp = c;
      let cpLen = 1;
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
        const d = text.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          cp = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
          cpLen = 2;
        }
      }
      const script = cpLen === 1 ? SCRIPT_TABLE[c]! : scriptOf(cp);
      if (script !== 0 && script !== groupScript) {
        // A new script run: words never continue across it.
        if (groupScript !== 0) {
          flushWord(text, ctx, sink, interStart, i, groupScript, flags);
          interStart = i;
          flags = 0;
        }
        groupScript = script;
      }

      if (patternStart[c] === 1) {
        const p = this.matchPattern(text, i, groupScript);
        if (p !== null) {
          flushWord(text, ctx, sink, interStart, i, groupScript, flags);
          const end = i + p.text.length;
          groupScript = scriptAfter(p.text, groupScript);
          if (p.sepKind !== SEP_NONE) sink.separator(i, end, p.sepKind);
          else sink.word(i, end, groupScript, F_FULL);
          i = end;
          interStart = i;
          flags = 0;
          continue;
        }
      }

      const kind = cpLen === 1 ? sepTable[c]! : this.singleSepKind(cp);
      if (kind !== SEP_NONE) {
        flushWord(text, ctx, sink, interStart, i, groupScript, flags);
        sink.separator(i, i + cpLen, kind);
        i += cpLen;
        interStart = i;
        flags = 0;
        continue;
      }

      if (c < 0x80) {
        if (c >= 0x41 && c <= 0x5a) flags |= F_UPPER;
        else if (c <= 0x20 || c === 0x7f) flags |= F_CTRL;
      } else {
        flags |= F_NON_ASCII;
        if (isDictionarySegmentedScript(script)) flags |= F_SEGMENT;
      }
      i += cpLen;
    }
    flushWord(text, ctx, sink, interStart, n, groupScript, flags);
  }

  /** Longest pattern starting at `i` that stays inside the current script run. */
  private matchPattern(text: string, i: number, groupScript: number): Pattern | null {
    const list = this.patterns.get(text.charCodeAt(i));
    if (list === undefined) return null;
    for (const p of list) {
      if (text.startsWith(p.text, i) && scriptAfter(p.text, groupScript) !== -1) return p;
    }
    return null;
  }
}

/** Reports the word (or a segmented script's words) read in [start, end), if any. */
function flushWord(text: string, ctx: ScanContext, sink: ScanSink, start: number, end: number, script: number, flags: number): void {
  if (end <= start) return;
  if ((flags & F_SEGMENT) !== 0) {
    segmentRun(text, start, end, script, ctx.hint, (s, e) => sink.word(s, e, script, F_FULL));
  } else {
    sink.word(start, end, script, flags);
  }
}

/**
 * Script of the run after reading `s` from a run of script `groupScript`, or
 * -1 when `s` would span two runs (the reference only matches within a run).
 */
function scriptAfter(s: string, groupScript: number): number {
  let current = groupScript;
  for (const ch of s) {
    const sc = scriptOf(ch.codePointAt(0)!);
    if (sc !== 0 && sc !== current) {
      if (current !== 0) return -1;
      current = sc;
    }
  }
  return current;
}

let defaultTokenizer: Tokenizer | undefined;

/** Shared tokenizer with the reference defaults (no custom settings). */
export function getDefaultTokenizer(): Tokenizer {
  return (defaultTokenizer ??= new Tokenizer());
}
