import { ApiError, type ErrorCode } from '../../errors/api-error.js';
import type { ParseKind } from './lexer.js';

/** The three codes a filter error can carry, depending on the route that received the filter. */
export type FilterErrorCode = Extract<ErrorCode, 'invalid_search_filter' | 'invalid_document_filter' | 'invalid_similar_filter' | 'invalid_export_index_filter'>;

/** A half-open range of UTF-16 indices into the filter text. */
export interface Span {
  start: number;
  end: number;
}

/**
 * Why a filter was refused, and where. The message is rendered like the reference's: the
 * diagnostic, a newline, then `<start>:<end> <filter>` where the columns count code points
 * (1-based, from the last newline before the span) and the end is start + the span's length.
 */
export class FilterError extends Error {
  constructor(
    readonly diagnostic: string,
    /** Null for errors about the index's rules rather than about a place in the filter. */
    readonly span: Span | null,
    readonly source: string,
  ) {
    super(span ? renderFilterError(diagnostic, span, source) : diagnostic);
    this.name = 'FilterError';
  }

  toApiError(code: ErrorCode): ApiError {
    return new ApiError(code, this.message);
  }
}

export function renderFilterError(diagnostic: string, span: Span, source: string): string {
  const lineStart = source.lastIndexOf('\n', span.start - 1) + 1;
  const column = codePointCount(source, lineStart, span.start) + 1;
  const size = codePointCount(source, span.start, span.end);
  return `${diagnostic}\n${column}:${column + size} ${source}`;
}

export function codePointCount(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < to) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

// Characters the reference's debug escaping writes as `\u{..}`: controls, format characters,
// separators other than the plain space, private use and unassigned code points.
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}]/u;
const EXTENDING = /[\p{Mn}\p{Me}]/u;

/**
 * Escapes text the way the reference quotes user input inside its filter diagnostics, so
 * that a diagnostic stays on one line: quotes and backslashes get a backslash, `\t \r \n`
 * their usual escapes, and unprintable characters a `\u{hex}` form.
 */
export function escapeDebug(s: string): string {
  let out = '';
  let first = true;
  for (const ch of s) {
    switch (ch) {
      case '\t':
        out += '\\t';
        break;
      case '\r':
        out += '\\r';
        break;
      case '\n':
        out += '\\n';
        break;
      case '\\':
        out += '\\\\';
        break;
      case "'":
        out += "\\'";
        break;
      case '"':
        out += '\\"';
        break;
      case '\0':
        out += '\\0';
        break;
      default:
        if (UNPRINTABLE.test(ch) || (first && EXTENDING.test(ch))) {
          out += `\\u{${ch.codePointAt(0)!.toString(16)}}`;
        } else {
          out += ch;
        }
    }
    first = false;
  }
  return out;
}

/**
 * A float as Rust's `Display` writes it (the reference echoes numbers this way): the shortest
 * digits that read back to the same value, never in exponent form.
 */
export function rustFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  if (Object.is(n, -0)) return '-0';
  const s = String(n);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const [, sign, lead, frac = '', e] = m;
  const exp = Number(e);
  if (exp >= 0) return sign + lead + frac + '0'.repeat(Math.max(0, exp - frac.length));
  return `${sign}0.${'0'.repeat(-exp - 1)}${lead}${frac}`;
}

const OPERATIONS =
  '`=`, `!=`, `>=`, `>`, `<=`, `<`, `IN`, `NOT IN`, `TO`, `EXISTS`, `NOT EXISTS`, `IS NULL`, `IS NOT NULL`, ' +
  '`IS EMPTY`, `IS NOT EMPTY`, `CONTAINS`, `NOT CONTAINS`, `STARTS WITH`, `NOT STARTS WITH`, `_geoRadius`, ' +
  '`_geoBoundingBox` or `_geoPolygon`';

const GEO_RULES =
  'Use the `_geoRadius(latitude, longitude, distance)` or `_geoBoundingBox([latitude, longitude], [latitude, longitude])` ' +
  'built-in rules to filter on `_geo` coordinates.';

/** Unicode-aware `trim() === ''`, as the reference decides that a quoted fragment is "nothing". */
function isBlank(s: string): boolean {
  return /^\p{White_Space}*$/u.test(s);
}

/** The first line of a parse error: the reference's wording for each kind of mistake. */
export function diagnosticOf(kind: ParseKind, context: string): string {
  const input = escapeDebug(context);
  switch (kind.k) {
    case 'expectedValue':
      if (isBlank(context)) return 'Was expecting a value but instead got nothing.';
      if (kind.reserved) {
        return `Was expecting a value but instead got \`${input}\`, which is a reserved keyword. To use \`${input}\` as a field name or a value, surround it by quotes.`;
      }
      return `Was expecting a value but instead got \`${input}\`.`;
    case 'malformedValue':
      return `Malformed value: \`${input}\`.`;
    case 'missingClosing':
      return `Expression \`${input}\` is missing the following closing delimiter: \`${kind.ch}\`.`;
    case 'invalidPrimary':
      return `Was expecting an operation ${OPERATIONS} ${isBlank(context) ? 'but instead got nothing.' : `at \`${input}\`.`}`;
    case 'invalidEscapedNumber':
      return `Found an invalid escaped sequence number: \`${input}\`.`;
    case 'expectedEof':
      return `Found unexpected characters at the end of the filter: \`${input}\`. You probably forgot an \`OR\` or an \`AND\` rule.`;
    case 'geoRadius':
      return 'The `_geoRadius` filter must be in the form: `_geoRadius(latitude, longitude, radius, optionalResolution)`.';
    case 'geoRadiusArgs':
      return `Was expecting 3 or 4 arguments for \`_geoRadius\`, but instead found ${kind.n}.`;
    case 'geoBoundingBox':
      return 'The `_geoBoundingBox` filter expects two pairs of arguments: `_geoBoundingBox([latitude, longitude], [latitude, longitude])`.';
    case 'geoPolygon':
      return 'The `_geoPolygon` filter must be in the form: `_geoPolygon([latitude, longitude], [latitude, longitude], [latitude, longitude], ...)`.';
    case 'geoPolygonArgs':
      return `The \`_geoPolygon\` filter expects at least 3 points but only ${kind.n} were specified.`;
    case 'foreign':
      return 'The `_foreign` filter must be in the form: `_foreign(field, filter)`, where `field` is a foreign key of the index and `filter` a filter on the documents of its foreign index.';
    case 'nestedForeign':
      return 'Nested foreign filters are not supported';
    case 'reservedGeo':
      return `\`${kind.name}\` is a reserved keyword and thus can't be used as a filter expression. ${GEO_RULES}`;
    case 'misusedGeo':
      return `The \`${kind.name}\` filter is an operation and can't be used as a value.`;
    case 'reservedKeyword':
      return `\`${kind.word}\` is a reserved keyword and thus cannot be used as a field name unless it is put inside quotes. Use "${kind.word}" or '${kind.word}' instead.`;
    case 'inOpeningBracket':
      return 'Expected `[` after `IN` keyword.';
    case 'inClosingBracket':
      return 'Expected matching `]` after the list of field names given to `IN[`';
    case 'inExpectedValue':
      return `Expected only comma-separated field names inside \`IN[..]\` but instead found \`${input}\`.`;
    case 'depthLimit':
      return 'The filter exceeded the maximum depth limit. Try rewriting the filter so that it contains fewer nested conditions.';
    case 'char':
    case 'internal':
      return `Encountered an internal \`${kind.k === 'char' ? 'Char' : kind.what}\` error while parsing your filter. Please fill an issue`;
  }
}
