import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Bitmap } from '../../src/engine/facets/bitmap.js';
import { computeFacets } from '../../src/engine/facets/distribution.js';
import { searchFacetValues } from '../../src/engine/facets/facet-search.js';
import { checkGeoField } from '../../src/engine/facets/extract.js';
import { checkSortable, DistinctFilter, parseSortExpression, sortBuckets, sortDocids } from '../../src/engine/facets/sort.js';
import { defaultSettings } from '../../src/engine/settings/settings.js';
import { FacetFixture } from './facet-fixture.js';

const faceting = (over: Partial<ReturnType<typeof defaultSettings>['faceting']> = {}) => ({ ...defaultSettings().faceting, ...over });

describe('facet distribution and stats', () => {
  let fx: FacetFixture;
  beforeAll(async () => {
    fx = await FacetFixture.open({ filterableAttributes: ['colour', 'size', 'doggos'] });
    await fx.add([
      { colour: 'Blue', size: 10 },
      { colour: '  blue', size: 9 },
      { colour: 'RED', size: 10 },
      { colour: 'green', size: 'L', doggos: [{ name: 'Rex' }] },
    ]);
  });
  afterAll(async () => {
    await fx.close();
  });

  const all = () => fx.index.state.universe().clone();
  const run = (cands: Bitmap, facets: string[], f = faceting()) => computeFacets(fx.index.state, fx.settings.filterableAttributes, f, cands, facets);

  it('counts per normalized value under the first spelling, numbers first', () => {
    const r = run(all(), ['colour', 'size']);
    expect(r.facetDistribution).toEqual({ colour: { Blue: 2, RED: 1, green: 1 }, size: { 10: 2, 9: 1, L: 1 } });
    expect(Object.keys(r.facetDistribution['size']!)).toEqual(['9', '10', 'L']);
    expect(r.facetStats).toEqual({ size: { min: 9, max: 10 } });
    expect(run(Bitmap.of([1, 2]), ['colour']).facetDistribution).toEqual({ colour: { '  blue': 1, RED: 1 } });
  });

  it('orders values alphabetically or by count, up to maxValuesPerFacet', () => {
    const byCount = run(all(), ['colour'], faceting({ sortFacetValuesBy: { '*': 'count' } }));
    expect(Object.entries(byCount.facetDistribution['colour']!)).toEqual([['Blue', 2], ['green', 1], ['RED', 1]]);
    const one = run(all(), ['colour'], faceting({ maxValuesPerFacet: 1, sortFacetValuesBy: { '*': 'alpha', colour: 'count' } }));
    expect(one.facetDistribution).toEqual({ colour: { Blue: 2 } });
  });

  it('selects nested fields through their parent, every filterable field with *, and omits empty facets', () => {
    expect(run(all(), ['doggos']).facetDistribution).toEqual({ 'doggos.name': { Rex: 1 } });
    expect(Object.keys(run(all(), ['*']).facetDistribution)).toEqual(['colour', 'doggos.name', 'size']);
    expect(run(Bitmap.of([0]), ['doggos', 'size']).facetDistribution).toEqual({ size: { 10: 1 } });
    expect(run(Bitmap.of([3]), ['size']).facetStats).toEqual({});
  });

  it('leaves out facets that are not filterable, as the spec says', () => {
    expect(run(all(), ['title']).facetDistribution).toEqual({});
    expect(Object.keys(run(all(), ['b', 'size', 'a']).facetDistribution)).toEqual(['size']);
  });
});

describe('sorting and distinct', () => {
  let fx: FacetFixture;
  beforeAll(async () => {
    fx = await FacetFixture.open({ filterableAttributes: ['_geo', 'kind'], sortableAttributes: ['rank', '_geo'] });
    await fx.add([
      { rank: 'b', kind: 'x', _geo: { lat: 48.8566, lng: 2.3522 } },
      { rank: 3, kind: 'y', _geo: { lat: '45.7640', lng: '4.8357' } },
      { kind: 'x' },
      { rank: [10, 'a'], kind: ['x', 'z'], _geo: { lat: 43.2965, lng: 5.3698 } },
      { rank: -1, kind: 'y' },
    ]);
  });
  afterAll(async () => {
    await fx.close();
  });
  const all = () => fx.index.state.universe().clone();

  it('sorts numbers, then strings, then missing values, in both directions', () => {
    const asc = [...sortBuckets(fx.index.state, parseSortExpression('rank:asc'), all())];
    expect(asc.map((b) => [b.value, b.docids])).toEqual([[-1, [4]], [3, [1]], [10, [3]], ['b', [0]], [null, [2]]]);
    const desc = sortDocids(fx.index.state, [parseSortExpression('rank:desc')], all());
    expect(desc).toEqual([3, 1, 4, 0, 2]);
  });

  it('orders a few candidates among many values the same way as the postings do', async () => {
    const many = await FacetFixture.open({ sortableAttributes: ['v'] });
    const docs = Array.from({ length: 300 }, (_, i) =>
      i % 7 === 0 ? {} : i % 5 === 0 ? { v: `s${(i * 37) % 101}` } : i % 11 === 0 ? { v: [i % 13, `t${i}`] } : { v: (i * 7919) % 1000 },
    );
    await many.add(docs);
    const cands = [3, 14, 22, 35, 44, 49, 50, 77, 88, 99, 110, 121, 143, 150, 299];
    // Reference order: numbers first (smallest/largest), then strings, then missing; ties by docid.
    const key = (d: number, asc: boolean): [number, number | string] => {
      const raw = (docs[d] as { v?: unknown }).v;
      const vals = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
      const nums = vals.filter((x): x is number => typeof x === 'number');
      const strs = vals.filter((x): x is string => typeof x === 'string').sort();
      if (nums.length) return [0, asc ? Math.min(...nums) : Math.max(...nums)];
      if (strs.length) return [1, asc ? strs[0]! : strs[strs.length - 1]!];
      return [2, 0];
    };
    for (const asc of [true, false]) {
      const expected = [...cands].sort((a, b) => {
        const [ka, va] = key(a, asc);
        const [kb, vb] = key(b, asc);
        if (ka !== kb) return ka - kb;
        if (va !== vb) return (va < vb ? -1 : 1) * (asc || ka === 2 ? 1 : -1);
        return a - b;
      });
      expect(sortDocids(many.index.state, [parseSortExpression(`v:${asc ? 'asc' : 'desc'}`)], Bitmap.of(cands))).toEqual(expected);
    }
    await many.close();
  });

  it('sorts by distance to a point with _geoPoint, documents without _geo last', () => {
    const paris = parseSortExpression('_geoPoint(48.85, 2.35):asc');
    const b = [...sortBuckets(fx.index.state, paris, all())];
    expect(b.map((x) => x.docids)).toEqual([[0], [1], [3], [2, 4]]);
    expect(Math.round(b[1]!.distance! / 1000)).toBe(391);
    expect(sortDocids(fx.index.state, [parseSortExpression('_geoPoint(48.85, 2.35):desc')], all(), 2)).toEqual([3, 1]);
  });

  it('filters by radius and bounding box', () => {
    expect(fx.filter('_geoRadius(48.85, 2.35, 2000)')).toEqual([0]);
    expect(fx.filter('_geoRadius(45, 4, 500000)')).toEqual([0, 1, 3]);
    expect(fx.filter('_geoBoundingBox([46, 6], [43, 4])')).toEqual([1, 3]);
    expect(fx.filter('_geoBoundingBox([50, -170], [40, 3])')).toEqual([1, 3]);
    expect(fx.filterError('_geoRadius(95, 2, 10)')).toBe(
      'Bad latitude `95`. Latitude must be contained between -90 and 90 degrees.\n12:14 _geoRadius(95, 2, 10)',
    );
    expect(fx.filterError('_geoRadius(45, 250, 10)')).toMatch(/^Bad longitude `250`\. .* Hint: try using `-110` instead\.\n16:19/);
    expect(fx.filterError('_geoBoundingBox([40, 6], [43, 4])')).toMatch(/^The top latitude `40` is below the bottom latitude `43`\.\n31:32/);
    expect(fx.filterError('_geoRadius(45, 2, 10, 2)')).toMatch(/^Invalid resolution `2`\. Resolution must be between 3 and 1000\.\n23:24/);
  });

  it('validates sort expressions and sortable attributes', () => {
    expect(() => parseSortExpression('rank')).toThrow(
      'Invalid syntax for the sort parameter: expected expression ending by `:asc` or `:desc`, found `rank`.',
    );
    expect(() => parseSortExpression('_geo:asc')).toThrow(
      "`_geo` is a reserved keyword and thus can't be used as a sort expression. Use the _geoPoint(latitude, longitude) built-in rule to sort on _geo field coordinates.",
    );
    expect(() => parseSortExpression('_geoDistance:asc')).toThrow("`_geoDistance` is a reserved keyword and thus can't be used as a sort expression.");
    expect(() => parseSortExpression('_geoPoint(1, 2, 3):asc')).toThrow(
      'Invalid syntax for the geo parameter: expected expression formated like `_geoPoint(latitude, longitude)` and ending by `:asc` or `:desc`, found `_geoPoint(1, 2, 3)`.',
    );
    expect(() => parseSortExpression('_geoPoint(91, 2):asc')).toThrow('Bad latitude `91`.');
    expect(parseSortExpression('a:b:desc')).toMatchObject({ kind: 'field', field: 'a:b', ascending: false });
    const s = { ...fx.settings };
    expect(() => checkSortable([parseSortExpression('kind:asc')], s, 'invalid_search_sort', true)).toThrow(
      'Attribute `kind` is not sortable. Available sortable attributes are: `_geo, rank`.',
    );
    expect(() => checkSortable([parseSortExpression('rank:asc')], { ...s, rankingRules: ['words'] }, 'invalid_search_sort', true)).toThrow(
      'You must specify where `sort` is listed in the rankingRules setting to use the sort parameter at search time.',
    );
  });

  it('keeps one document per distinct value, sharing any array element', () => {
    const d = new DistinctFilter(fx.index.state, 'kind');
    expect([0, 1, 2, 3, 4].filter((x) => d.keep(x))).toEqual([0, 1]);
    const e = new DistinctFilter(fx.index.state, 'kind');
    expect([3, 0, 2, 4, 1].filter((x) => e.keep(x))).toEqual([3, 4]);
  });
});

describe('facet search', () => {
  let fx: FacetFixture;
  beforeAll(async () => {
    fx = await FacetFixture.open({ filterableAttributes: ['genre'] });
    await fx.add([{ genre: 'Adventure' }, { genre: 'Action' }, { genre: 'adventure' }, { genre: 'Horror' }, { genre: 'Aventura' }]);
  });
  afterAll(async () => {
    await fx.close();
  });

  it('matches prefixes with typos by length, counting among candidates', () => {
    const search = (q: string | null, cands = fx.index.state.universe().clone()) =>
      searchFacetValues(fx.index.state, fx.settings, 'genre', q, cands);
    expect(search('adv')).toEqual([{ value: 'Adventure', count: 2 }]);
    expect(search('ACT')).toEqual([{ value: 'Action', count: 1 }]);
    expect(search('advanture')).toEqual([{ value: 'Adventure', count: 2 }]);
    expect(search('avdenture').map((h) => h.value)).toEqual(['Adventure', 'Aventura']);
    expect(search('avde').map((h) => h.value)).toEqual([]);
    expect(search('hor')).toEqual([{ value: 'Horror', count: 1 }]);
    expect(search(null).map((h) => h.value)).toEqual(['Action', 'Adventure', 'Aventura', 'Horror']);
    expect(search('a', Bitmap.of([2, 4]))).toEqual([{ value: 'adventure', count: 1 }, { value: 'Aventura', count: 1 }]);
  });
});

describe('_geo validation', () => {
  it('refuses malformed _geo fields with the reference messages', () => {
    const msg = (g: unknown) => checkGeoField({ id: 11, _geo: g }, 11)?.message ?? null;
    expect(msg(null)).toBeNull();
    expect(msg({ lat: '1.5', lng: -3 })).toBeNull();
    expect(msg('x')).toBe(
      'The `_geo` field in the document with the id: `"11"` is not an object. Was expecting an object with the `_geo.lat` and `_geo.lng` fields but instead got `"x"`.',
    );
    expect(msg({ lat: 1, lng: 2, alt: 3 })).toBe('The `_geo` field in the document with the id: `"11"` contains the following unexpected fields: `{"alt":3}`.');
    expect(msg({})).toBe('Could not find latitude nor longitude in the document with the id: `"11"`. Was expecting `_geo.lat` and `_geo.lng` fields.');
    expect(msg({ lng: 2 })).toBe('Could not find latitude in the document with the id: `"11"`. Was expecting a `_geo.lat` field.');
    expect(msg({ lat: 'doggo', lng: 2 })).toBe(
      'Could not parse latitude in the document with the id: `"11"`. Was expecting a finite number but instead got `"doggo"`.',
    );
    expect(msg({ lat: true, lng: null })).toBe(
      'Could not parse latitude nor longitude in the document with the id: `"11"`. Was expecting finite numbers but instead got `true` and `null`.',
    );
  });

  it('fails a batch with a malformed _geo once the batch processor names the primary key', async () => {
    const gx = await FacetFixture.open({ filterableAttributes: ['_geo'] });
    const bad = [{ docid: 0, before: null, after: { id: 'a', _geo: { lat: 'north', lng: 1 } } }];
    await expect(gx.index.prepare(bad, gx.settings, { primaryKey: 'id' })).rejects.toThrow(/Could not parse latitude in the document with the id: `"a"`/);
    await expect(gx.index.prepare(bad, gx.settings)).resolves.toBeDefined();
    await gx.close();
  });
});
