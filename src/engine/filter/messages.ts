import { escapeDebug } from './errors.js';
import type { ParseKind } from './lexer.js';

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
