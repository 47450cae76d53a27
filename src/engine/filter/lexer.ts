import type { Token } from './filter-tree.js';

/**
 * What went wrong while parsing, before it is rendered. `fatal` mirrors the reference
 * parser's split between a recoverable error (the next alternative is tried) and a failure
 * (parsing stops): the same inputs must fail the same way for the messages to match.
 */
export type ParseKind =
  | { k: 'expectedValue'; reserved: boolean }
  | { k: 'malformedValue' }
  | { k: 'missingClosing'; ch: string }
  | { k: 'invalidPrimary' }
  | { k: 'invalidEscapedNumber' }
  | { k: 'expectedEof' }
  | { k: 'geoRadius' }
  | { k: 'geoRadiusArgs'; n: number }
  | { k: 'geoBoundingBox' }
  | { k: 'geoPolygon' }
  | { k: 'geoPolygonArgs'; n: number }
  | { k: 'foreign' }
  | { k: 'nestedForeign' }
  | { k: 'reservedGeo'; name: string }
  | { k: 'misusedGeo'; name: string }
  | { k: 'reservedKeyword'; word: string }
  | { k: 'inOpeningBracket' }
  | { k: 'inClosingBracket' }
  | { k: 'inExpectedValue' }
  | { k: 'depthLimit' }
  | { k: 'char'; ch: string }
  | { k: 'internal'; what: string };

export class ParseFail {
  constructor(
    public fatal: boolean,
    readonly kind: ParseKind,
    readonly start: number,
    readonly end: number,
  ) {}
}

export const KEYWORDS = new Set([
  'AND', 'OR', 'IN', 'NOT', 'TO', 'EXISTS', 'IS', 'NULL', 'EMPTY', 'CONTAINS', 'STARTS', 'WITH',
  '_geoRadius', '_geoBoundingBox', '_geoPolygon',
]);

const VALUE_CHAR = /[\p{Alphabetic}\p{N}_.\-]/u;
const UNICODE_WS = /\p{White_Space}/u;
const SYNTAX_CHARS = new Set(['(', ')', '=', '<', '>', '!']);

/** Word characters among ASCII, looked up instead of matched: most filters are ASCII. */
const ASCII_VALUE_CHAR = new Uint8Array(128).map((_, c) => (VALUE_CHAR.test(String.fromCharCode(c)) ? 1 : 0));

/**
 * Position-level helpers over one filter string. Every method takes a UTF-16 offset and
 * returns the offset after what it consumed, or throws a {@link ParseFail}.
 */
export class Lexer {
  protected readonly len: number;
  private readonly isValueChar: Uint8Array;

  constructor(readonly src: string) {
    this.len = src.length;
    // Classify each UTF-16 unit once; a surrogate pair gets its class on the high unit.
    this.isValueChar = new Uint8Array(src.length + 1);
    for (let i = 0; i < src.length; i++) {
      const c = src.charCodeAt(i);
      if (c < 128) {
        this.isValueChar[i] = ASCII_VALUE_CHAR[c]!;
        continue;
      }
      const cp = src.codePointAt(i)!;
      if (VALUE_CHAR.test(String.fromCodePoint(cp))) this.isValueChar[i] = 1;
      if (cp > 0xffff) i++;
    }
  }

  fail(kind: ParseKind, start: number, end = this.len): ParseFail {
    return new ParseFail(true, kind, start, end);
  }

  error(kind: ParseKind, start: number, end = this.len): ParseFail {
    return new ParseFail(false, kind, start, end);
  }

  /** nom's `multispace0`: ASCII spaces, tabs and line breaks only. */
  ws(p: number): number {
    while (p < this.len) {
      const c = this.src.charCodeAt(p);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
      p++;
    }
    return p;
  }

  ws1(p: number): number {
    const q = this.ws(p);
    if (q === p) throw this.error({ k: 'internal', what: 'MultiSpace' }, p);
    return q;
  }

  /** Any Unicode white space, as values skip before them. */
  unicodeWs(p: number): number {
    while (p < this.len && UNICODE_WS.test(this.src[p]!)) p++;
    return p;
  }

  tag(p: number, t: string): number {
    if (!this.src.startsWith(t, p)) throw this.error({ k: 'internal', what: 'Tag' }, p);
    return p + t.length;
  }

  char(p: number, ch: string): number {
    if (this.src[p] !== ch) throw this.error({ k: 'char', ch }, p);
    return p + 1;
  }

  /** End of the longest run of word characters (letters, digits, `_`, `-`, `.`) at `p`. */
  wordEnd(p: number): number {
    let q = p;
    while (q < this.len && this.isValueChar[q] === 1) q += this.src.codePointAt(q)! > 0xffff ? 2 : 1;
    return q;
  }

  word(p: number): number {
    const q = this.wordEnd(p);
    if (q === p) throw this.error({ k: 'internal', what: 'TakeWhile1' }, p);
    return q;
  }

  /** A whole word equal to `w` (so `ORdog` is not `OR`). */
  wordExact(p: number, w: string): number {
    const q = this.word(p);
    if (q - p !== w.length || !this.src.startsWith(w, p)) throw this.error({ k: 'internal', what: 'Tag' }, q);
    return q;
  }

  /** The text a diagnostic quotes for a bad value: up to white space or a syntax character. */
  errorWordEnd(p: number): number {
    let q = p;
    while (q < this.len) {
      const ch = String.fromCodePoint(this.src.codePointAt(q)!);
      if (UNICODE_WS.test(ch) || SYNTAX_CHARS.has(ch)) break;
      q += ch.length;
    }
    return q;
  }

  token(start: number, end: number, value = this.src.slice(start, end)): Token {
    return { value, span: { start, end }, source: this.src };
  }

  /** nom's `recognize_float`: sign, digits with an optional fraction (or `.digits`), exponent. */
  float(p: number): Token {
    let q = p;
    const digits = () => {
      const s = q;
      while (q < this.len && this.src.charCodeAt(q) >= 0x30 && this.src.charCodeAt(q) <= 0x39) q++;
      return q > s;
    };
    if (this.src[q] === '+' || this.src[q] === '-') q++;
    if (digits()) {
      if (this.src[q] === '.') {
        q++;
        digits();
      }
    } else if (this.src[q] === '.') {
      q++;
      if (!digits()) throw this.error({ k: 'internal', what: 'Float' }, p);
    } else {
      throw this.error({ k: 'internal', what: 'Float' }, p);
    }
    if (this.src[q] === 'e' || this.src[q] === 'E') {
      q++;
      if (this.src[q] === '+' || this.src[q] === '-') q++;
      if (!digits()) throw this.fail({ k: 'internal', what: 'Digit' }, q);
    }
    return this.token(p, q);
  }

  /**
   * The inside of a quoted string starting at `p` (after the opening quote); stops before the
   * first unescaped `quote`, or at the end of the input. A backslash escapes the next
   * character; `\<quote>` becomes the quote itself.
   */
  quotedBy(p: number, quote: string): Token {
    let escaped = false;
    let i = p;
    while (i < this.len) {
      const c = this.src[i]!;
      if (c === quote) break;
      if (c === '\\') {
        if (i + 1 >= this.len) throw this.error({ k: 'malformedValue' }, p);
        if (this.src[i + 1] === quote) escaped = true;
        i += 2;
        continue;
      }
      i++;
    }
    const raw = this.src.slice(p, i);
    return this.token(p, i, escaped ? raw.split('\\' + quote).join(quote) : raw);
  }

  /** Interprets backslash escapes of a value (`\n`, `\t`, `\u{..}`, `\x..`, ...). */
  unescape(t: Token): Token {
    const v = t.value;
    if (!v.includes('\\')) return t;
    let out = '';
    for (let i = 0; i < v.length; i++) {
      const c = v[i]!;
      if (c !== '\\') {
        out += c;
        continue;
      }
      const n = v[++i];
      const simple = n === undefined ? undefined : SIMPLE_ESCAPES[n];
      if (simple !== undefined) {
        out += simple;
      } else if (n === 'x' || n === 'u') {
        let hex: string;
        let used: number;
        if (n === 'x') {
          hex = v.slice(i + 1, i + 3);
          used = 2;
        } else if (v[i + 1] === '{') {
          const close = v.indexOf('}', i + 2);
          if (close < 0) throw this.error({ k: 'malformedValue' }, t.span.start, t.span.end);
          hex = v.slice(i + 2, close);
          used = close - i;
        } else {
          hex = v.slice(i + 1, i + 5);
          used = 4;
        }
        const valid = n === 'x' ? /^[0-9a-fA-F]{2}$/ : /^[0-9a-fA-F]{1,6}$/;
        if (!valid.test(hex)) throw this.error({ k: 'invalidEscapedNumber' }, t.span.start, t.span.end);
        const cp = parseInt(hex, 16);
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) throw this.error({ k: 'malformedValue' }, t.span.start, t.span.end);
        out += String.fromCodePoint(cp);
        i += used;
      } else {
        throw this.error({ k: 'malformedValue' }, t.span.start, t.span.end);
      }
    }
    return { ...t, value: out };
  }
}

const SIMPLE_ESCAPES: Record<string, string> = {
  b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', "'": "'", '"': '"', '\\': '\\', '/': '/', '0': '\0',
};

/** A float as the reference reads one (`f64::from_str`): `inf`/`nan` included, hex and `_` excluded. */
export function parseRustFloat(s: string): number | null {
  if (!/^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)$/i.test(s)) return null;
  const body = s.replace(/^[+-]/, '').toLowerCase();
  if (body === 'inf' || body === 'infinity') return s.startsWith('-') ? -Infinity : Infinity;
  if (body === 'nan') return NaN;
  return Number(s);
}

/** A finite float or null, as equality and ranges read filter values. */
export function finiteFloat(s: string): number | null {
  const n = parseRustFloat(s);
  return n !== null && Number.isFinite(n) ? n : null;
}
