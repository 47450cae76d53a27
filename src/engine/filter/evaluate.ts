import type { FilterableAttributeRule } from '../settings/settings.js';
import { normalizeFacet } from '../tokenizer/index.js';
import { Bitmap } from '../facets/bitmap.js';
import { facetKey } from '../facets/extract.js';
import type { FacetState } from '../facets/facet-state.js';
import type { Bound, FieldFacets } from '../facets/field-facets.js';
import { intersectsCircle, intersectsPolygon } from '../facets/geojson.js';
import { filterFields, type Condition, type FilterNode, type Token } from './filter-tree.js';
import { FilterError, rustFloat } from './errors.js';
import { finiteFloat, parseRustFloat } from './lexer.js';
import {
  isFilterable, matchingFeatures, notFilterableMessage, operatorNotAllowedMessage, type AttributeFeatures,
} from './rules.js';
import { evaluateVectorFilter, isVectorField, type VectorFacts } from './vector-filter.js';

type Rules = readonly (string | FilterableAttributeRule)[];

/** What `_shard` needs: the documents of some shards of the network. */
export interface ShardFilters {
  docsOf(shards: ReadonlySet<string>): Bitmap;
}

/** The field naming the shard that owns each document in a sharded network. */
export const SHARD_FIELD = '_shard';

/** What `_foreign(field, filter)` needs: the index's foreign keys, and the other indexes' documents. */
export interface ForeignFilters {
  keys: readonly { foreignIndexUid: string; fieldName: string }[];
  /** The ids of the documents of index `uid` that `filter` selects, under that index's own rules. */
  matchingIds(uid: string, filter: FilterNode): string[];
}

function tokenError(t: Token, message: string): FilterError {
  return new FilterError(message, t.span, t.source);
}

/** A float argument of a geo function, as the reference reads it (finite or an error). */
function geoFloat(t: Token): number {
  const n = parseRustFloat(t.value);
  if (n === null || !Number.isFinite(n)) throw tokenError(t, 'Non finite floats are not supported');
  return n;
}

function latitude(t: Token): number {
  const lat = geoFloat(t);
  if (!(lat >= -90 && lat <= 90)) {
    throw tokenError(t, `Bad latitude \`${rustFloat(lat)}\`. Latitude must be contained between -90 and 90 degrees.`);
  }
  return lat;
}

function longitude(t: Token): number {
  const lng = geoFloat(t);
  if (!(lng >= -180 && lng <= 180)) {
    const normalized = ((((lng + 180) % 360) + 360) % 360) - 180;
    throw tokenError(
      t,
      `Bad longitude \`${rustFloat(lng)}\`. Longitude must be contained between -180 and 180 degrees. Hint: try using \`${rustFloat(normalized)}\` instead.`,
    );
  }
  return lng;
}

/**
 * Evaluates a parsed filter against an index's facets. Every field the filter names must be
 * filterable; operators are checked against the features of the first rule matching their
 * field. `!=` and `NOT` take the complement within all documents, so documents without the
 * field match them.
 */
export class FilterEvaluator {
  private readonly cap: number;

  constructor(
    private readonly state: FacetState,
    private readonly rules: Rules,
    /** The index's embeddings, for `_vectors` filters. */
    private readonly vectors: VectorFacts | null = null,
    /** For `_foreign(…)`; without it, no field counts as a foreign key. */
    private readonly foreign: ForeignFilters | null = null,
    /** For `_shard`; without it, no document belongs to a shard. */
    private readonly shards: ShardFilters | null = null,
  ) {
    this.cap = state.capacity();
  }

  evaluate(node: FilterNode): Bitmap {
    for (const t of filterFields(node)) {
      if (isVectorField(t.value) || t.value === SHARD_FIELD) continue;
      const m = matchingFeatures(t.value, this.rules);
      if (!m || !isFilterable(m.features)) throw tokenError(t, notFilterableMessage(t.value, this.rules));
    }
    return this.node(node, null);
  }

  /** The documents matching `node`, restricted to `hint` when given; the result is the caller's to modify. */
  private node(node: FilterNode, hint: Bitmap | null): Bitmap {
    switch (node.type) {
      case 'not': {
        const selected = this.node(node.child, hint);
        return (hint ?? this.state.universe()).clone().andNot(selected);
      }
      case 'and': {
        let acc = this.node(node.children[0]!, hint);
        for (let i = 1; i < node.children.length && !acc.isEmpty(); i++) acc = acc.and(this.node(node.children[i]!, acc));
        return acc;
      }
      case 'or': {
        const acc = new Bitmap(this.cap);
        for (const c of node.children) acc.or(this.node(c, hint));
        return acc;
      }
      case 'in': {
        if (isVectorField(node.field.value)) return evaluateVectorFilter(node.field, 'IN', this.vectors, this.cap);
        if (node.field.value === SHARD_FIELD) return this.shardDocs(new Set(node.values.map((v) => v.value)));
        const acc = new Bitmap(this.cap);
        const target = this.target(node.field);
        if (!target) return acc;
        for (const value of node.values) acc.or(this.condition(target, { op: '=', value }));
        return acc;
      }
      case 'condition': {
        if (isVectorField(node.field.value)) return evaluateVectorFilter(node.field, node.cond.op, this.vectors, this.cap);
        if (node.field.value === SHARD_FIELD) return this.shardCondition(node.field, node.cond);
        const target = this.target(node.field);
        return target ? this.condition(target, node.cond, hint) : new Bitmap(this.cap);
      }
      case 'geoRadius':
        return this.geoRadius(node);
      case 'geoBoundingBox':
        return this.geoBoundingBox(node);
      case 'geoPolygon':
        return this.geoPolygon(node);
      case 'foreign':
        return this.foreignKey(node, hint);
    }
  }

  /** The documents of the named shards (none when the network does not shard). */
  private shardDocs(names: ReadonlySet<string>): Bitmap {
    return this.shards ? this.shards.docsOf(names) : new Bitmap(this.cap);
  }

  /** `_shard = name`, `_shard != name` (and `_shard IN [...]` above): the only conditions a shard takes. */
  private shardCondition(field: Token, cond: Condition): Bitmap {
    if (cond.op === '=') return this.shardDocs(new Set([cond.value.value]));
    if (cond.op === '!=') return this.state.universe().clone().andNot(this.shardDocs(new Set([cond.value.value])));
    throw tokenError(field, `The \`${SHARD_FIELD}\` field only takes \`=\`, \`!=\`, \`IN\` and \`NOT IN\`: it names the shard that owns each document.`);
  }

  /**
   * `_foreign(field, filter)`, as the reference runs it: the filter selects documents of the
   * foreign index, and their ids become `"field" IN [ids]` on this index, which must let the
   * field be filtered (errors then point into that written-out condition).
   */
  private foreignKey(node: Extract<FilterNode, { type: 'foreign' }>, hint: Bitmap | null): Bitmap {
    const field = node.field.value;
    const key = this.foreign?.keys.find((k) => k.fieldName === field);
    if (!this.foreign || !key) throw tokenError(node.field, `Field \`${field}\` is not a foreign key`);
    const ids = this.foreign.matchingIds(key.foreignIndexUid, node.filter);
    let source = `"${field}" IN [`;
    const spans = ids.map((id, i) => {
      if (i > 0) source += ', ';
      const start = source.length + 1;
      source += `"${id}"`;
      return { start, end: start + id.length };
    });
    source += ']';
    const fieldToken: Token = { value: field, span: { start: 1, end: 1 + field.length }, source };
    const m = matchingFeatures(field, this.rules);
    if (!m || !isFilterable(m.features)) throw tokenError(fieldToken, notFilterableMessage(field, this.rules));
    const values = ids.map((value, i): Token => ({ value, span: spans[i]!, source }));
    return this.node({ type: 'in', field: fieldToken, values }, hint);
  }

  /** A field never seen in any document matches nothing, not even `!=`, as in the reference. */
  private target(t: Token): { field: FieldFacets; features: AttributeFeatures; ruleIndex: number } | null {
    const field = this.state.field(t.value);
    const m = matchingFeatures(t.value, this.rules);
    return field && m ? { field, ...m } : null;
  }

  /** `hint`: documents the caller will intersect the result with; a range may then look only at those. */
  private condition(t: { field: FieldFacets; features: AttributeFeatures; ruleIndex: number }, cond: Condition, hint: Bitmap | null = null): Bitmap {
    const { field, features } = t;
    const refuse = () => new FilterError(operatorNotAllowedMessage(field.name, cond.op, features, t.ruleIndex), null, '');
    const out = new Bitmap(this.cap);
    switch (cond.op) {
      case '=': {
        if (!features.equality) throw refuse();
        const s = field.strings.get(facetKey(cond.value.value));
        if (s) out.addSorted(s.docids);
        const n = finiteFloat(cond.value.value);
        const nums = n === null ? undefined : field.numbers.get(n === 0 ? 0 : n);
        if (nums) out.addSorted(nums);
        return out;
      }
      case '!=': {
        if (!features.equality) throw refuse();
        return this.state.universe().clone().andNot(this.condition(t, { op: '=', value: cond.value }));
      }
      case '<':
      case '<=':
      case '>':
      case '>=':
      case 'TO': {
        if (!features.comparison) throw refuse();
        const [lo, hi] = this.bounds(cond);
        const nums = lo.n !== undefined && hi.n !== undefined ? field.numberRange(lo.n, hi.n) : ([0, 0] as [number, number]);
        const strs = field.stringRange(lo.s, hi.s);
        const nr = field.numberRuns();
        const sr = field.stringRuns();
        const postings = nr.offsets[nums[1]]! - nr.offsets[nums[0]]! + sr.offsets[strs[1]]! - sr.offsets[strs[0]]!;
        if (hint && hint.size() * 4 < postings) {
          field.orRangeAmong(out, hint, nums, strs);
        } else {
          out.addSorted(nr.docids.subarray(nr.offsets[nums[0]], nr.offsets[nums[1]]));
          out.addSorted(sr.docids.subarray(sr.offsets[strs[0]], sr.offsets[strs[1]]));
        }
        return out;
      }
      case 'EXISTS':
        out.addSorted(field.exists);
        return out;
      case 'IS NULL':
        out.addSorted(field.nulls);
        return out;
      case 'IS EMPTY':
        out.addSorted(field.empties);
        return out;
      case 'CONTAINS':
        field.orStringContains(out, normalizeFacet(cond.value.value));
        return out;
      case 'STARTS WITH':
        field.orStringPrefix(out, normalizeFacet(cond.value.value));
        return out;
    }
  }

  /**
   * Number and string bounds of a comparison. A value that reads as a number bounds the
   * numbers; every value also bounds the strings (after normalization), as the reference
   * compares both kinds of facet values.
   */
  private bounds(cond: Condition): [
    { n: Bound<number> | null | undefined; s: Bound<string> | null },
    { n: Bound<number> | null | undefined; s: Bound<string> | null },
  ] {
    const num = (t: Token, inclusive: boolean) => {
      const n = finiteFloat(t.value);
      return n === null ? undefined : { value: n, inclusive };
    };
    const str = (t: Token, inclusive: boolean) => ({ value: normalizeFacet(t.value), inclusive });
    switch (cond.op) {
      case '>':
        return [{ n: num(cond.value, false), s: str(cond.value, false) }, { n: null, s: null }];
      case '>=':
        return [{ n: num(cond.value, true), s: str(cond.value, true) }, { n: null, s: null }];
      case '<':
        return [{ n: null, s: null }, { n: num(cond.value, false), s: str(cond.value, false) }];
      case '<=':
        return [{ n: null, s: null }, { n: num(cond.value, true), s: str(cond.value, true) }];
      case 'TO': {
        const from = num(cond.from, true);
        const to = num(cond.to, true);
        const both = from !== undefined && to !== undefined;
        return [
          { n: both ? from : undefined, s: str(cond.from, true) },
          { n: both ? to : undefined, s: str(cond.to, true) },
        ];
      }
      default:
        return [{ n: null, s: null }, { n: null, s: null }];
    }
  }

  private geoFeatures(): { geo: boolean; geojson: boolean } {
    return { geo: this.rules.includes('_geo'), geojson: this.rules.includes('_geojson') };
  }

  private geoRadius(node: Extract<FilterNode, { type: 'geoRadius' }>): Bitmap {
    const lat = latitude(node.lat);
    const lng = longitude(node.lng);
    const radius = geoFloat(node.radius);
    if (node.resolution) {
      const r = Math.max(0, Math.trunc(geoFloat(node.resolution)));
      if (r < 3 || r > 1000) throw tokenError(node.resolution, `Invalid resolution \`${r}\`. Resolution must be between 3 and 1000.`);
    }
    const { geo, geojson } = this.geoFeatures();
    if (!geo && !geojson) throw tokenError(node.lat, notFilterableMessage('_geo/_geojson', this.rules));
    const out = geo ? this.state.geo.withinRadius(lat, lng, radius, this.cap) : new Bitmap(this.cap);
    if (geojson) for (const [d, s] of this.state.shapes) if (intersectsCircle(s, lat, lng, radius)) out.add(d);
    return out;
  }

  private geoBoundingBox(node: Extract<FilterNode, { type: 'geoBoundingBox' }>): Bitmap {
    const top = latitude(node.topRight[0]);
    const east = longitude(node.topRight[1]);
    const bottom = latitude(node.bottomLeft[0]);
    const west = longitude(node.bottomLeft[1]);
    if (top < bottom) {
      throw tokenError(node.bottomLeft[1], `The top latitude \`${rustFloat(top)}\` is below the bottom latitude \`${rustFloat(bottom)}\`.`);
    }
    const { geo, geojson } = this.geoFeatures();
    if (!geo && !geojson) throw tokenError(node.topRight[0], notFilterableMessage('_geo/_geojson', this.rules));
    const out = geo ? this.state.geo.withinBox(top, east, bottom, west, this.cap) : new Bitmap(this.cap);
    if (geojson) {
      const ring: [number, number][] = [[east, top], [west, top], [west, bottom], [east, bottom]];
      for (const [d, s] of this.state.shapes) if (intersectsPolygon(s, ring)) out.add(d);
    }
    return out;
  }

  private geoPolygon(node: Extract<FilterNode, { type: 'geoPolygon' }>): Bitmap {
    if (!this.geoFeatures().geojson) throw tokenError(node.points[0]![0], notFilterableMessage('_geojson', this.rules));
    const ring = node.points.map(([la, ln]) => {
      const lat = latitude(la);
      return [longitude(ln), lat] as [number, number];
    });
    const out = new Bitmap(this.cap);
    for (const [d, s] of this.state.shapes) if (intersectsPolygon(s, ring)) out.add(d);
    return out;
  }
}
