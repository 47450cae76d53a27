import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FacetFixture } from './facet-fixture.js';

const DOCS = [
  /* 0 */ { id: 0, color: 'Blue', price: 10, tags: ['a', 'b'], ok: true, cattos: 'pésti', doggos: [{ name: 'bobby', age: 2 }] },
  /* 1 */ { id: 1, color: '  blue', price: '10', tags: [], ok: false, cattos: ['simba', 'pestiféré'], nested: { deep: null } },
  /* 2 */ { id: 2, color: 'RED', price: 25.5, tags: ['b'], note: '', doggos: [{ name: 'gros bill', age: 8 }, { name: 'turbo' }] },
  /* 3 */ { id: 3, price: 3, tags: [null], note: null, obj: {} },
  /* 4 */ { id: 4, color: 'green', price: 'cheap', note: 'hello world' },
];

let fx: FacetFixture;
beforeAll(async () => {
  fx = await FacetFixture.open({
    filterableAttributes: ['color', 'price', 'tags', 'ok', 'cattos', 'doggos', 'note', 'obj', 'nested', 'id'],
  });
  await fx.add(DOCS);
});
afterAll(async () => {
  await fx.close();
});

describe('filter evaluation', () => {
  it('compares strings case-insensitively but keeps accents', () => {
    expect(fx.filter('color = BLUE')).toEqual([0, 1]);
    expect(fx.filter("color = ' Blue '")).toEqual([0, 1]);
    expect(fx.filter('cattos = pesti')).toEqual([]);
    expect(fx.filter('cattos = PÉSTI')).toEqual([0]);
    expect(fx.filter('cattos = "pestiféré"')).toEqual([1]);
  });

  it('matches numbers and numeric strings with a numeric value, booleans as words', () => {
    expect(fx.filter('price = 10')).toEqual([0, 1]);
    expect(fx.filter('price = 10.0')).toEqual([0]);
    expect(fx.filter('ok = true')).toEqual([0]);
    expect(fx.filter('ok = "FALSE"')).toEqual([1]);
  });

  it('lets != and NOT match documents without the field', () => {
    expect(fx.filter('color != blue')).toEqual([2, 3, 4]);
    expect(fx.filter('NOT color = blue')).toEqual([2, 3, 4]);
    expect(fx.filter('NOT color EXISTS')).toEqual([3]);
    expect(fx.filter('NOT NOT color = red')).toEqual([2]);
  });

  it('matches arrays on any element and nested objects by dot path', () => {
    expect(fx.filter('tags = b')).toEqual([0, 2]);
    expect(fx.filter('doggos.name = turbo')).toEqual([2]);
    expect(fx.filter('doggos.age > 5')).toEqual([2]);
    expect(fx.filter('doggos.age EXISTS')).toEqual([0, 2]);
    expect(fx.filter('doggos = bobby')).toEqual([]);
  });

  it('implements EXISTS, IS NULL and IS EMPTY like the reference', () => {
    expect(fx.filter('note EXISTS')).toEqual([2, 3, 4]);
    expect(fx.filter('note IS NULL')).toEqual([3]);
    expect(fx.filter('nested.deep IS NULL')).toEqual([1]);
    expect(fx.filter('tags IS NULL')).toEqual([]);
    expect(fx.filter('tags IS EMPTY')).toEqual([1]);
    expect(fx.filter('note IS EMPTY OR obj IS EMPTY')).toEqual([2, 3]);
    expect(fx.filter('note IS NOT EMPTY')).toEqual([0, 1, 3, 4]);
    expect(fx.filter('tags EXISTS')).toEqual([0, 1, 2, 3]);
  });

  it('evaluates ranges on numbers (inclusive TO) and on strings', () => {
    expect(fx.filter('price 3 TO 10')).toEqual([0, 3]);
    expect(fx.filter('price > 3')).toEqual([0, 2, 4]);
    expect(fx.filter('price >= 3 AND price < 25.5')).toEqual([0, 3]);
    // No number lies in 10..3, but the string "10" lies in "10".."3".
    expect(fx.filter('price 10 TO 3')).toEqual([1]);
    expect(fx.filter('price 30 TO 20')).toEqual([]);
    expect(fx.filter('color > GREEN')).toEqual([2]);
    expect(fx.filter('color a TO c')).toEqual([0, 1]);
  });

  it('evaluates IN, NOT IN, CONTAINS and STARTS WITH', () => {
    expect(fx.filter('color IN [red, GREEN]')).toEqual([2, 4]);
    expect(fx.filter('color NOT IN [red, green]')).toEqual([0, 1, 3]);
    expect(fx.filter('note CONTAINS "LO WO"')).toEqual([4]);
    expect(fx.filter('cattos STARTS WITH pes')).toEqual([1]);
  });

  it('combines with precedence and the array form', () => {
    expect(fx.filter('color = blue OR color = red AND price > 20')).toEqual([0, 1, 2]);
    expect(fx.filter('(color = blue OR color = red) AND price > 20')).toEqual([2]);
    expect(fx.filter(['tags = b', ['color = red', 'color = blue']])).toEqual([0, 2]);
    expect(fx.filter(['', ['']])).toEqual([0, 1, 2, 3, 4]);
  });

  it('matches nothing, not even with !=, on a filterable field no document ever had', () => {
    expect(fx.filter('obj.missing != 1')).toEqual([]);
  });

  it('refuses non-filterable attributes with the available patterns and the span', () => {
    expect(fx.filterError('color = blue AND title = x')).toBe(
      'Attribute `title` is not filterable. Available filterable attribute patterns are: `cattos`, `color`, `doggos`, `id`, `nested`, `note`, `obj`, `ok`, `price`, `tags`.\n18:23 color = blue AND title = x',
    );
  });

  it('follows documents through updates, deletions and a restart', async () => {
    await fx.apply({ 4: { id: 4, color: 'Blue' }, 3: null });
    expect(fx.filter('color = blue')).toEqual([0, 1, 4]);
    expect(fx.filter('price = cheap')).toEqual([]);
    expect(fx.filter('NOT color EXISTS')).toEqual([]);
    await fx.reopen();
    expect(fx.filter('color = blue')).toEqual([0, 1, 4]);
    expect(fx.filter('note IS EMPTY')).toEqual([2]);
    expect(fx.filter('doggos.name = "gros bill"')).toEqual([2]);
    await fx.apply({ 3: DOCS[3]!, 4: DOCS[4]! });
  });
});

describe('index-wide changes', () => {
  it('starts over when every document is cleared, and when filterable attributes change', async () => {
    const cx = await FacetFixture.open({ filterableAttributes: ['a'] });
    await cx.add([{ a: 1, b: 'x' }, { a: 2, b: 'y' }]);
    await cx.reset({ 5: { a: 2, b: 'y' } });
    expect(cx.filter('a = 2')).toEqual([5]);
    expect(cx.filter('NOT a = 1')).toEqual([5]);
    await cx.reopen();
    expect(cx.filter('a EXISTS')).toEqual([5]);
    expect(cx.filterError('b = y')).toMatch(/^Attribute `b` is not filterable/);
    await cx.changeSettings({ filterableAttributes: ['b'] });
    expect(cx.filter('b = Y')).toEqual([5]);
    await cx.reopen();
    expect(cx.filter('b = Y')).toEqual([5]);
    await cx.close();
  });
});

describe('persistence across chunks', () => {
  it('stays equal to a direct evaluation through random batches and a restart', async () => {
    const px = await FacetFixture.open({ filterableAttributes: ['a', 'b', 'c', '_geo'] });
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const spellings = ['Red', 'RED', 'blue', 'Green'];
    const makeDoc = () => ({
      ...(rand(4) ? { a: rand(20) } : {}),
      ...(rand(3) ? { b: spellings[rand(4)] } : {}),
      ...(rand(2) ? { c: [rand(5), `x${rand(3)}`] } : {}),
      ...(rand(2) ? { _geo: { lat: rand(10), lng: rand(10) } } : {}),
    });
    const docids = Array.from({ length: 120 }, (_, i) => i * 173);
    for (let batch = 0; batch < 6; batch++) {
      const changes: Record<number, ReturnType<typeof makeDoc> | null> = {};
      for (let k = 0; k < 40; k++) changes[docids[rand(docids.length)]!] = rand(5) === 0 ? null : makeDoc();
      await px.apply(changes);
    }
    type D = ReturnType<typeof makeDoc>;
    const expect_ = (pred: (d: D) => boolean) =>
      [...px.docs.entries()].filter(([, d]) => pred(d as D)).map(([id]) => id).sort((x, y) => x - y);
    const checks: [string, (d: D) => boolean][] = [
      ['a = 3', (d) => d.a === 3],
      ['a > 12', (d) => d.a !== undefined && d.a > 12],
      ['b = red', (d) => d.b?.toLowerCase() === 'red'],
      ['b != green', (d) => d.b?.toLowerCase() !== 'green'],
      ['c = 2 OR c = x1', (d) => !!d.c && (d.c[0] === 2 || d.c[1] === 'x1')],
      ['_geoBoundingBox([5, 5], [0, 0])', (d) => !!d._geo && d._geo.lat <= 5 && d._geo.lng <= 5],
      ['NOT a EXISTS', (d) => d.a === undefined],
    ];
    for (const [f, pred] of checks) expect(px.filter(f), f).toEqual(expect_(pred));
    await px.reopen();
    for (const [f, pred] of checks) expect(px.filter(f), f).toEqual(expect_(pred));
    await px.close();
  });
});

describe('filterable attribute rules', () => {
  let rx: FacetFixture;
  beforeAll(async () => {
    rx = await FacetFixture.open({
      filterableAttributes: [
        { attributePatterns: ['genre*'], features: { facetSearch: false, filter: { equality: true, comparison: false } } },
        { attributePatterns: ['*_at'], features: { facetSearch: false, filter: { equality: true, comparison: true } } },
        { attributePatterns: ['_*'], features: { facetSearch: false, filter: { equality: true, comparison: true } } },
        'year',
      ],
    });
    await rx.add([{ genres: 'drama', created_at: 5, year: 2000, _private: 1 }, { genres: 'comedy', created_at: 9, year: 1990 }]);
  });
  afterAll(async () => {
    await rx.close();
  });

  it('applies the features of the first matching rule', () => {
    expect(rx.filter('genres = DRAMA')).toEqual([0]);
    expect(rx.filter('created_at > 6')).toEqual([1]);
    expect(rx.filter('year 1995 TO 2005')).toEqual([0]);
    expect(rx.filterError('genres > a')).toBe(
      'Filter operator `>` is not allowed for the attribute `genres`.\n' +
        '  - Note: allowed operators: OR, AND, NOT, =, !=, IN, IS EMPTY, IS NULL, EXISTS.\n' +
        '  - Note: field `genres` matched rule #0 in `filterableAttributes`\n' +
        '  - Hint: enable comparison in rule #0 by modifying the features.filter object\n' +
        '  - Hint: prepend another rule matching `genres` with appropriate filter features before rule #0',
    );
    expect(rx.filterError('genres 1 TO 2')).toMatch(/^Filter operator `TO` is not allowed/);
  });

  it('never matches reserved fields with patterns', () => {
    expect(rx.filter('_private = 1')).toEqual([0]);
    expect(rx.filterError('_geoRadius(1, 2, 3)')).toBe(
      'Attribute `_geo/_geojson` is not filterable. Available filterable attribute patterns are: `*_at`, `_*`, `genre*`, `year`.\n12:13 _geoRadius(1, 2, 3)',
    );
  });
});
