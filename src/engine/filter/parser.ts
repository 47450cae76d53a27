import type { Condition, FilterNode, Token } from './filter-tree.js';
import { findForeign } from './find-foreign.js';
import { diagnosticOf, FilterError } from './errors.js';
import { KEYWORDS, Lexer, ParseFail } from './lexer.js';

/** Nesting allowed by the grammar: each parenthesis costs four levels, each `NOT` one. */
export const MAX_PARSE_DEPTH = 200;

type Parsed<T> = [number, T];

/** Runs `f`; a recoverable error becomes a failure (nom's `cut`). */
function cut<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof ParseFail) e.fatal = true;
    throw e;
  }
}

/** Runs `f`; a recoverable error yields `null` so the caller can try something else. */
function attempt<T>(f: () => T): T | null {
  try {
    return f();
  } catch (e) {
    if (e instanceof ParseFail && !e.fatal) return null;
    throw e;
  }
}

function not(child: FilterNode): FilterNode {
  return child.type === 'not' ? child.child : { type: 'not', child };
}

/**
 * The filter grammar (`or := and (OR and)*`, `and := not (AND not)*`, `not := NOT not |
 * primary`) with the reference parser's order of alternatives and its error/failure split,
 * so that a malformed filter is reported with the same message and span.
 */
class FilterParser extends Lexer {
  parse(): FilterNode {
    const [p, node] = this.or(0, 0);
    if (p < this.len) throw this.error({ k: 'expectedEof' }, p);
    return node;
  }

  private depthCheck(p: number, depth: number): void {
    if (depth > MAX_PARSE_DEPTH) throw this.error({ k: 'depthLimit' }, p);
  }

  private list(p: number, depth: number, keyword: 'OR' | 'AND', next: (p: number, d: number) => Parsed<FilterNode>): Parsed<FilterNode> {
    this.depthCheck(p, depth);
    let [q, first] = next(p, depth + 1);
    const children = [first];
    for (;;) {
      const after = attempt(() => this.ws(this.wordExact(this.ws(q), keyword)));
      if (after === null) break;
      const [r, child] = cut(() => next(after, depth + 1));
      children.push(child);
      q = r;
    }
    if (children.length === 1) return [q, first];
    first = keyword === 'OR' ? { type: 'or', children } : { type: 'and', children };
    return [q, first];
  }

  private or(p: number, depth: number): Parsed<FilterNode> {
    return this.list(p, depth, 'OR', (q, d) => this.and(q, d));
  }

  private and(p: number, depth: number): Parsed<FilterNode> {
    return this.list(p, depth, 'AND', (q, d) => this.not(q, d));
  }

  private not(p: number, depth: number): Parsed<FilterNode> {
    this.depthCheck(p, depth);
    const after = attempt(() => this.ws(this.wordExact(this.ws(p), 'NOT')));
    if (after !== null) {
      const [q, child] = cut(() => this.not(after, depth + 1));
      return [q, not(child)];
    }
    return this.primary(p, depth + 1);
  }

  private primary(p: number, depth: number): Parsed<FilterNode> {
    this.depthCheck(p, depth);
    const alternatives: (() => Parsed<FilterNode>)[] = [
      () => this.parens(p, depth),
      () => this.foreign(p, depth),
      () => this.geoRadius(p),
      () => this.geoBoundingBox(p),
      () => this.geoPolygon(p),
      () => this.inList(p, false),
      () => this.inList(p, true),
      () => this.comparison(p),
      () => this.suffix(p, ['IS', 'NULL'], { op: 'IS NULL' }, false),
      () => this.suffix(p, ['IS', 'NOT', 'NULL'], { op: 'IS NULL' }, true),
      () => this.suffix(p, ['IS', 'EMPTY'], { op: 'IS EMPTY' }, false),
      () => this.suffix(p, ['IS', 'NOT', 'EMPTY'], { op: 'IS EMPTY' }, true),
      () => this.exists(p),
      () => this.suffix(p, ['NOT', 'EXISTS'], { op: 'EXISTS' }, true),
      () => this.range(p),
      () => this.keywordValue(p, 'CONTAINS', false),
      () => this.keywordValue(p, 'CONTAINS', true),
      () => this.keywordValue(p, 'STARTS WITH', false),
      () => this.keywordValue(p, 'STARTS WITH', true),
      () => this.reservedKeywordFailure(p),
    ];
    for (const alt of alternatives) {
      const r = attempt(alt);
      if (r !== null) return r;
    }
    throw this.error({ k: 'invalidPrimary' }, p);
  }

  private parens(p: number, depth: number): Parsed<FilterNode> {
    const open = this.char(this.ws(p), '(');
    const [q, node] = cut(() => this.or(this.ws(open), depth + 1));
    const r = attempt(() => this.ws(this.char(this.ws(q), ')')));
    if (r === null) throw this.fail({ k: 'missingClosing', ch: ')' }, p);
    return [r, node];
  }

  /**
   * `_foreign(field, filter)`: once `_foreign(` is read, the rest must parse. The inner filter
   * is evaluated on another index, and cannot itself hold a `_foreign`.
   */
  private foreign(p: number, depth: number): Parsed<FilterNode> {
    const start = this.ws(p);
    const open = this.char(this.ws(this.wordExact(start, '_foreign')), '(');
    const keyword = this.token(start, start + '_foreign'.length);
    try {
      const [q, field] = this.value(open);
      const comma = this.char(q, ',');
      const [r, filter] = this.or(this.ws(comma), depth + 1);
      const close = this.ws(this.char(this.ws(r), ')'));
      if (findForeign(filter)) throw this.fail({ k: 'nestedForeign' }, field.span.start, field.span.end);
      return [close, { type: 'foreign', keyword, field, filter }];
    } catch (e) {
      if (e instanceof ParseFail && !e.fatal) throw this.fail({ k: 'foreign' }, start);
      throw e;
    }
  }

  /** `IN [..]` or `NOT IN [..]`. */
  private inList(p: number, negated: boolean): Parsed<FilterNode> {
    let [q, field] = this.value(p);
    if (negated) q = this.wordExact(q, 'NOT');
    q = this.ws(this.wordExact(this.ws(q), 'IN'));
    if (this.src[q] !== '[') throw this.fail({ k: 'inOpeningBracket' }, q);
    const [r, values] = cut(() => this.valueList(q + 1));
    const closed = attempt(() => this.ws(this.char(this.ws(r), ']')));
    if (closed === null) {
      throw this.fail(r >= this.len ? { k: 'inClosingBracket' } : { k: 'inExpectedValue' }, r);
    }
    const node: FilterNode = { type: 'in', field, values };
    return [closed, negated ? not(node) : node];
  }

  private valueList(p: number): Parsed<Token[]> {
    const first = attempt(() => this.value(p));
    if (first === null) return [p, []];
    let [q, v] = first;
    const values = [v];
    for (;;) {
      const next = attempt(() => this.value(this.ws(this.tag(this.ws(q), ','))));
      if (next === null) break;
      [q, v] = next;
      values.push(v);
    }
    const comma = attempt(() => this.ws(this.tag(this.ws(q), ',')));
    return [comma ?? q, values];
  }

  private comparison(p: number): Parsed<FilterNode> {
    const [q, field] = this.value(p);
    const op = (['<=', '>=', '!=', '<', '>', '='] as const).find((o) => this.src.startsWith(o, q));
    if (!op) throw this.error({ k: 'internal', what: 'Tag' }, q);
    const [r, value] = cut(() => this.value(q + op.length));
    return [r, { type: 'condition', field, cond: { op, value } }];
  }

  /** `<field> IS NULL`-like forms: keywords separated by white space after the field. */
  private suffix(p: number, words: string[], cond: Condition, negated: boolean): Parsed<FilterNode> {
    let [q, field] = this.value(p);
    words.forEach((w, i) => {
      if (i > 0) q = this.ws1(q);
      q = this.tag(q, w);
    });
    const node: FilterNode = { type: 'condition', field, cond };
    return [q, negated ? not(node) : node];
  }

  private exists(p: number): Parsed<FilterNode> {
    const [q, field] = this.value(p);
    return [this.tag(q, 'EXISTS'), { type: 'condition', field, cond: { op: 'EXISTS' } }];
  }

  private range(p: number): Parsed<FilterNode> {
    const [q, field] = this.value(p);
    const [r, from] = this.value(q);
    const s = this.ws1(this.tag(r, 'TO'));
    const [t, to] = cut(() => this.value(s));
    return [t, { type: 'condition', field, cond: { op: 'TO', from, to } }];
  }

  private keywordValue(p: number, keyword: 'CONTAINS' | 'STARTS WITH', negated: boolean): Parsed<FilterNode> {
    let [q, field] = this.value(p);
    if (negated) q = this.ws1(this.tag(q, 'NOT'));
    const kw = this.token(q, this.tag(q, keyword));
    const [r, value] = cut(() => this.value(kw.span.end));
    const node: FilterNode = { type: 'condition', field, cond: { op: keyword, keyword: kw, value } };
    return [r, negated ? not(node) : node];
  }

  /** A reserved word where a field was expected ends parsing with its own message. */
  private reservedKeywordFailure(p: number): Parsed<FilterNode> {
    try {
      return this.comparison(p);
    } catch (e) {
      if (e instanceof ParseFail) e.fatal = e.kind.k === 'expectedValue' && e.kind.reserved;
      throw e;
    }
  }

  /** `(float, float, ...)` right after a geo function's name. */
  private floatArgs(p: number): Parsed<Token[]> {
    let q = this.char(p, '(');
    const args: Token[] = [];
    for (;;) {
      const start = args.length === 0 ? q : attempt(() => this.tag(q, ','));
      if (start === null) break;
      const tok = attempt(() => this.float(this.ws(start)));
      if (tok === null) {
        if (args.length === 0) throw this.error({ k: 'internal', what: 'Float' }, q);
        break;
      }
      args.push(tok);
      q = this.ws(tok.span.end);
    }
    return [this.char(q, ')'), args];
  }

  /** `([float, float], [float, float], ...)`. */
  private pointArgs(p: number): Parsed<Token[][]> {
    let q = this.char(p, '(');
    const points: Token[][] = [];
    for (;;) {
      const start = points.length === 0 ? q : attempt(() => this.tag(q, ','));
      if (start === null) break;
      const bracket = attempt(() => this.char(this.ws(start), '['));
      if (bracket === null) {
        if (points.length === 0) throw this.error({ k: 'char', ch: '[' }, q);
        break;
      }
      const inner: Token[] = [];
      let r = bracket;
      for (;;) {
        const s = inner.length === 0 ? r : attempt(() => this.tag(r, ','));
        if (s === null) break;
        const tok = attempt(() => this.float(this.ws(s)));
        if (tok === null) {
          if (inner.length === 0) throw this.error({ k: 'internal', what: 'Float' }, r);
          break;
        }
        inner.push(tok);
        r = this.ws(tok.span.end);
      }
      q = this.ws(this.char(r, ']'));
      points.push(inner);
    }
    return [this.char(q, ')'), points];
  }

  /** A geo function: its name, then arguments that must parse or the whole filter fails. */
  private geoCall<T>(p: number, name: string, kind: 'geoRadius' | 'geoBoundingBox' | 'geoPolygon', args: (q: number) => Parsed<T>): Parsed<T> {
    const q = this.wordExact(this.ws(p), name);
    try {
      return args(q);
    } catch (e) {
      if (e instanceof ParseFail) throw this.fail({ k: kind }, p);
      throw e;
    }
  }

  geoRadius(p: number): Parsed<FilterNode> {
    const [q, args] = this.geoCall(p, '_geoRadius', 'geoRadius', (r) => this.floatArgs(r));
    if (args.length !== 3 && args.length !== 4) throw this.fail({ k: 'geoRadiusArgs', n: args.length }, q);
    return [q, { type: 'geoRadius', lat: args[0]!, lng: args[1]!, radius: args[2]!, resolution: args[3] ?? null }];
  }

  geoBoundingBox(p: number): Parsed<FilterNode> {
    const [q, pts] = this.geoCall(p, '_geoBoundingBox', 'geoBoundingBox', (r) => this.pointArgs(r));
    if (pts.length !== 2 || pts[0]!.length !== 2 || pts[1]!.length !== 2) throw this.fail({ k: 'geoBoundingBox' }, q);
    const [tr, bl] = pts as [[Token, Token], [Token, Token]];
    return [q, { type: 'geoBoundingBox', topRight: tr, bottomLeft: bl }];
  }

  geoPolygon(p: number): Parsed<FilterNode> {
    const [q, pts] = this.geoCall(p, '_geoPolygon', 'geoPolygon', (r) => this.pointArgs(r));
    if (pts.some((pt) => pt.length !== 2)) throw this.fail({ k: 'geoPolygon' }, q);
    if (pts.length < 3) throw this.fail({ k: 'geoPolygonArgs', n: pts.length }, q);
    return [q, { type: 'geoPolygon', points: pts as [Token, Token][] }];
  }

  /** A field name or value: a word, or a quoted string; trailing white space is consumed. */
  value(p0: number): Parsed<Token> {
    const p = this.unicodeWs(p0);
    if (this.src.charCodeAt(p) === 0x5f /* _ */) this.rejectMisusedGeo(p);
    let tok: Token;
    let end: number;
    try {
      const quote = this.src[p];
      if (quote === "'" || quote === '"') {
        tok = cut(() => this.quotedBy(p + 1, quote));
        end = cut(() => this.char(tok.span.end, quote));
      } else {
        end = this.word(p);
        tok = this.token(p, end);
        if (KEYWORDS.has(tok.value)) throw this.error({ k: 'reservedKeyword', word: tok.value }, end);
      }
    } catch (e) {
      if (!(e instanceof ParseFail)) throw e;
      if (!e.fatal) throw this.error({ k: 'expectedValue', reserved: e.kind.k === 'reservedKeyword' }, p, this.errorWordEnd(p));
      if (e.kind.k === 'char') throw this.fail({ k: 'missingClosing', ch: e.kind.ch }, p);
      throw e;
    }
    return [this.ws(end), this.unescape(tok)];
  }

  /** `_geo…` where a value is expected: a reserved name, or a geo function used as a value. */
  private rejectMisusedGeo(p: number): void {
    this.rejectReservedGeo(p);
    for (const [name, parse] of [
      ['_geoRadius', (q: number) => this.geoRadius(q)],
      ['_geoBoundingBox', (q: number) => this.geoBoundingBox(q)],
      ['_geoPolygon', (q: number) => this.geoPolygon(q)],
    ] as const) {
      // Only a value spelled like the function can be one misused as a value.
      if (!this.src.startsWith(name, p)) continue;
      let misused = true;
      try {
        parse(p);
      } catch (e) {
        if (!(e instanceof ParseFail)) throw e;
        misused = e.fatal;
      }
      if (misused) throw this.fail({ k: 'misusedGeo', name }, p);
    }
  }

  /** `_geo`, `_geoDistance` and `_geoPoint` can never appear in a filter. */
  private rejectReservedGeo(p: number): void {
    for (const name of ['_geoPoint', '_geoDistance'] as const) {
      if (this.src.startsWith(name, p)) throw this.fail({ k: 'reservedGeo', name }, p);
    }
    if (attempt(() => this.wordExact(p, '_geo')) !== null) throw this.fail({ k: 'reservedGeo', name: '_geo' }, p);
  }
}

/**
 * Parses one filter expression. Returns null for an empty or blank one; throws a
 * {@link FilterError} carrying the reference's diagnostic and span otherwise.
 */
export function parseFilterString(src: string): FilterNode | null {
  if (src.trim() === '') return null;
  const parser = new FilterParser(src);
  try {
    return parser.parse();
  } catch (e) {
    if (!(e instanceof ParseFail)) throw e;
    return throwRendered(e, src);
  }
}

function throwRendered(e: ParseFail, src: string): never {
  const diagnostic = diagnosticOf(e.kind, src.slice(e.start, e.end));
  throw new FilterError(diagnostic, { start: e.start, end: e.end }, src);
}
