import type { FilterableAttributeRule } from '../settings/settings.js';

export type PatternMatch = 'match' | 'parent' | 'none';

export interface AttributeFeatures {
  facetSearch: boolean;
  equality: boolean;
  comparison: boolean;
}

/** Plain-string rules turn every feature on. */
export const LEGACY_FEATURES: AttributeFeatures = Object.freeze({ facetSearch: true, equality: true, comparison: true });

/** Fields only a plain-string rule can name: no pattern object, wildcard or not, reaches them. */
const RESERVED = ['_geo', '_geojson', '_vectors'];

export function isReservedField(field: string): boolean {
  return RESERVED.some((r) => field === r || field.startsWith(r + '.'));
}

/** `field` is `facet` or nested under it (`doggo.name` is faceted by `doggo`). */
export function isFacetedBy(field: string, facet: string): boolean {
  return field === facet || (field.length > facet.length && field.startsWith(facet) && field[facet.length] === '.');
}

function matchPattern(pattern: string, field: string): PatternMatch {
  if (pattern === '*') return 'match';
  if (pattern.length > 1 && pattern.startsWith('*') && pattern.endsWith('*')) {
    if (field.includes(pattern.slice(1, -1))) return 'match';
  } else if (pattern.startsWith('*')) {
    if (field.endsWith(pattern.slice(1))) return 'match';
  } else if (pattern.endsWith('*')) {
    if (field.startsWith(pattern.slice(0, -1))) return 'match';
  } else if (pattern === field) {
    return 'match';
  }
  return isFacetedBy(pattern, field) ? 'parent' : 'none';
}

/** How one filterable-attributes rule relates to a field path. */
export function matchRule(rule: string | FilterableAttributeRule, field: string): PatternMatch {
  if (typeof rule === 'string') {
    if (isFacetedBy(field, rule)) return 'match';
    return isFacetedBy(rule, field) ? 'parent' : 'none';
  }
  if (isReservedField(field)) return 'none';
  let m: PatternMatch = 'none';
  for (const p of rule.attributePatterns) {
    const r = matchPattern(p, field);
    if (r === 'match') return 'match';
    if (r === 'parent') m = 'parent';
  }
  return m;
}

export function featuresOf(rule: string | FilterableAttributeRule): AttributeFeatures {
  if (typeof rule === 'string') return LEGACY_FEATURES;
  return { facetSearch: rule.features.facetSearch, equality: rule.features.filter.equality, comparison: rule.features.filter.comparison };
}

export function isFilterable(f: AttributeFeatures): boolean {
  return f.equality || f.comparison;
}

/** The first rule matching `field` decides its features; later rules are not consulted. */
export function matchingFeatures(
  field: string,
  rules: readonly (string | FilterableAttributeRule)[],
): { ruleIndex: number; features: AttributeFeatures } | null {
  for (let i = 0; i < rules.length; i++) {
    if (matchRule(rules[i]!, field) === 'match') return { ruleIndex: i, features: featuresOf(rules[i]!) };
  }
  return null;
}

/** The patterns of every rule whose features pass `keep`, sorted, without duplicates. */
export function patternsWhere(
  rules: readonly (string | FilterableAttributeRule)[],
  keep: (f: AttributeFeatures) => boolean,
): string[] {
  const out = new Set<string>();
  for (const r of rules) {
    if (!keep(featuresOf(r))) continue;
    if (typeof r === 'string') out.add(r);
    else for (const p of r.attributePatterns) out.add(p);
  }
  return [...out].sort(byteOrder);
}

/** Rust's string order: by UTF-8 bytes, which differs from UTF-16 order only past the BMP. */
export function byteOrder(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const hx = x >= 0xd800 && x <= 0xdfff;
    const hy = y >= 0xd800 && y <= 0xdfff;
    // A surrogate starts a 4-byte sequence, greater than any BMP character's encoding.
    if (hx !== hy) return hx ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/** `Attribute `x` is not filterable. ...` naming the patterns that do enable filtering. */
export function notFilterableMessage(attribute: string, rules: readonly (string | FilterableAttributeRule)[]): string {
  const patterns = patternsWhere(rules, isFilterable);
  if (patterns.length === 0) return `Attribute \`${attribute}\` is not filterable. This index does not have configured filterable attributes.`;
  return `Attribute \`${attribute}\` is not filterable. Available filterable attribute patterns are: ${patterns.map((p) => `\`${p}\``).join(', ')}.`;
}

export function allowedOperators(f: AttributeFeatures): string[] {
  if (!isFilterable(f)) return [];
  const ops = ['OR', 'AND', 'NOT'];
  if (f.equality) ops.push('=', '!=', 'IN');
  if (f.comparison) ops.push('<', '>', '<=', '>=', 'TO');
  ops.push('IS EMPTY', 'IS NULL', 'EXISTS');
  return ops;
}

/** The reference's explanation of an operator the matching rule does not enable. */
export function operatorNotAllowedMessage(field: string, operator: string, f: AttributeFeatures, ruleIndex: number): string {
  const family =
    operator === '=' || operator === '!=' || operator === 'IN'
      ? 'equality'
      : ['<', '>', '<=', '>=', 'TO'].includes(operator)
        ? 'comparison'
        : 'the appropriate filter operators';
  return (
    `Filter operator \`${operator}\` is not allowed for the attribute \`${field}\`.\n` +
    `  - Note: allowed operators: ${allowedOperators(f).join(', ')}.\n` +
    `  - Note: field \`${field}\` matched rule #${ruleIndex} in \`filterableAttributes\`\n` +
    `  - Hint: enable ${family} in rule #${ruleIndex} by modifying the features.filter object\n` +
    `  - Hint: prepend another rule matching \`${field}\` with appropriate filter features before rule #${ruleIndex}`
  );
}
