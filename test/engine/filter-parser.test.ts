import { describe, expect, it } from 'vitest';
import { parseFilter, type FilterNode, type Token } from '../../src/engine/filter/filter-tree.js';
import { ApiError } from '../../src/errors/api-error.js';
import { FilterError } from '../../src/engine/filter/errors.js';
import { parseFilterString } from '../../src/engine/filter/parser.js';

const tok = (t: Token) => `{${t.value}}`;

/** A compact rendering of the tree, in the reference's test notation. */
function show(n: FilterNode): string {
  switch (n.type) {
    case 'and':
      return `AND[${n.children.map((c) => show(c) + ', ').join('')}]`;
    case 'or':
      return `OR[${n.children.map((c) => show(c) + ', ').join('')}]`;
    case 'not':
      return `NOT (${show(n.child)})`;
    case 'in':
      return `${tok(n.field)} IN[${n.values.map((v) => tok(v) + ', ').join('')}]`;
    case 'geoRadius':
      return `_geoRadius(${[n.lat, n.lng, n.radius, ...(n.resolution ? [n.resolution] : [])].map(tok).join(', ')})`;
    case 'geoBoundingBox':
      return `_geoBoundingBox([${n.topRight.map(tok).join(', ')}], [${n.bottomLeft.map(tok).join(', ')}])`;
    case 'geoPolygon':
      return `_geoPolygon(${n.points.map((p) => `[${p.map(tok).join(', ')}]`).join(', ')})`;
    case 'foreign':
      return `_foreign(${tok(n.field)}, ${show(n.filter)})`;
    case 'condition': {
      const c = n.cond;
      const f = tok(n.field);
      if (c.op === 'TO') return `${f} ${tok(c.from)} TO ${tok(c.to)}`;
      return 'value' in c ? `${f} ${c.op} ${tok(c.value)}` : `${f} ${c.op}`;
    }
  }
}

const p = (s: string) => show(parseFilterString(s)!);

function err(s: string): string {
  try {
    parseFilterString(s);
  } catch (e) {
    if (e instanceof FilterError) return e.message;
    throw e;
  }
  throw new Error(`\`${s}\` parsed`);
}

const OPS =
  '`=`, `!=`, `>=`, `>`, `<=`, `<`, `IN`, `NOT IN`, `TO`, `EXISTS`, `NOT EXISTS`, `IS NULL`, `IS NOT NULL`, `IS EMPTY`, ' +
  '`IS NOT EMPTY`, `CONTAINS`, `NOT CONTAINS`, `STARTS WITH`, `NOT STARTS WITH`, `_geoRadius`, `_geoBoundingBox` or `_geoPolygon`';
const GEO = "is a reserved keyword and thus can't be used as a filter expression. Use the `_geoRadius(latitude, longitude, distance)` or `_geoBoundingBox([latitude, longitude], [latitude, longitude])` built-in rules to filter on `_geo` coordinates.";

describe('filter grammar', () => {
  it('parses every comparison operator, quoted or not', () => {
    expect(p('channel = Ponce')).toBe('{channel} = {Ponce}');
    expect(p('subscribers = 12')).toBe('{subscribers} = {12}');
    expect(p("channel = 'Mister Mv'")).toBe('{channel} = {Mister Mv}');
    expect(p('"dog race" = "Bernese Mountain"')).toBe('{dog race} = {Bernese Mountain}');
    expect(p('channel != ponce')).toBe('{channel} != {ponce}');
    for (const op of ['<', '>', '<=', '>=']) expect(p(`subscribers ${op} 1000`)).toBe(`{subscribers} ${op} {1000}`);
    expect(p('a=1')).toBe('{a} = {1}');
    expect(p('subscribers 100 TO 1000')).toBe('{subscribers} {100} TO {1000}');
    expect(p('doggo.name = bobby')).toBe('{doggo.name} = {bobby}');
  });

  it('parses IN lists with trailing commas, NOT IN, and the IS/EXISTS forms', () => {
    expect(p('colour IN[]')).toBe('{colour} IN[]');
    expect(p('colour IN[green,]')).toBe('{colour} IN[{green}, ]');
    expect(p(' colour IN [  green , blue , ]')).toBe('{colour} IN[{green}, {blue}, ]');
    expect(p('colour NOT IN[green,blue]')).toBe('NOT ({colour} IN[{green}, {blue}, ])');
    expect(p('subscribers IS NULL')).toBe('{subscribers} IS NULL');
    expect(p('subscribers  IS   NOT   NULL')).toBe('NOT ({subscribers} IS NULL)');
    expect(p('subscribers IS EMPTY')).toBe('{subscribers} IS EMPTY');
    expect(p('NOT subscribers IS NOT EMPTY')).toBe('{subscribers} IS EMPTY');
    expect(p('subscribers EXISTS')).toBe('{subscribers} EXISTS');
    expect(p('subscribers NOT   EXISTS')).toBe('NOT ({subscribers} EXISTS)');
    expect(p("subscribers CONTAINS 'hello'")).toBe('{subscribers} CONTAINS {hello}');
    expect(p('subscribers NOT CONTAINS hello')).toBe('NOT ({subscribers} CONTAINS {hello})');
    expect(p("subscribers STARTS WITH 'hel'")).toBe('{subscribers} STARTS WITH {hel}');
    expect(p("NOT subscribers NOT STARTS WITH 'hel'")).toBe('{subscribers} STARTS WITH {hel}');
  });

  it('gives NOT precedence over AND over OR, and parentheses precedence over all', () => {
    expect(p('NOT NOT NOT NOT x = 5')).toBe('{x} = {5}');
    expect(p('NOT NOT (NOT NOT x = 5)')).toBe('{x} = {5}');
    expect(p("channel = ponce AND 'dog race' != 'bernese mountain' OR subscribers > 1000")).toBe(
      'OR[AND[{channel} = {ponce}, {dog race} != {bernese mountain}, ], {subscribers} > {1000}, ]',
    );
    expect(p('a = 1 OR b = 2 OR c = 3 AND d = 4')).toBe('OR[{a} = {1}, {b} = {2}, AND[{c} = {3}, {d} = {4}, ], ]');
    expect(p('channel = ponce AND ( dog != x OR subscribers > 1000 )')).toBe(
      'AND[{channel} = {ponce}, OR[{dog} != {x}, {subscribers} > {1000}, ], ]',
    );
    expect(p('x = 1 OR NOT (colour IN [green, blue]  OR color = green) ')).toBe(
      'OR[{x} = {1}, NOT (OR[{colour} IN[{green}, {blue}, ], {color} = {green}, ]), ]',
    );
    expect(p('NOT "OR" EXISTS AND "EXISTS" NOT EXISTS')).toBe('AND[NOT ({OR} EXISTS), NOT ({EXISTS} EXISTS), ]');
  });

  it('unescapes quotes and backslash sequences inside quoted values', () => {
    expect(p("title = 'foo\\\\'")).toBe('{title} = {foo\\}');
    expect(p(`monitor = '27" to 30\\''`)).toBe(`{monitor} = {27" to 30'}`);
    expect(p(`x = "I'm \\"super\\" tamo"`)).toBe(`{x} = {I'm "super" tamo}`);
    expect(p("x = 'a\\tb\\u{e9}\\x41'")).toBe('{x} = {a\tbéA}');
    expect(p("x = ''")).toBe('{x} = {}');
    expect(err("x = 'a\\qb'")).toBe("Malformed value: `a\\\\qb`.\n6:10 x = 'a\\qb'");
    expect(err("x = 'a\\x4'")).toBe("Found an invalid escaped sequence number: `a\\\\x4`.\n6:10 x = 'a\\x4'");
  });

  it('parses the geo functions', () => {
    expect(p('_geoRadius(12, 13, 14)')).toBe('_geoRadius({12}, {13}, {14})');
    expect(p('_geoRadius(12,13,14,200)')).toBe('_geoRadius({12}, {13}, {14}, {200})');
    expect(p('NOT _geoRadius(12, 13, 14)')).toBe('NOT (_geoRadius({12}, {13}, {14}))');
    expect(p('_geoBoundingBox([12,13],[14,15])')).toBe('_geoBoundingBox([{12}, {13}], [{14}, {15}])');
    expect(p('_geoPolygon([1, 2], [3.5, -4], [5,6])')).toBe('_geoPolygon([{1}, {2}], [{3.5}, {-4}], [{5}, {6}])');
  });

  it('accepts 49 nested parentheses and many NOTs but not 50', () => {
    expect(p('('.repeat(49) + 'x = 1' + ')'.repeat(49))).toBe('{x} = {1}');
    const deep = '('.repeat(50) + 'x = 1' + ')'.repeat(50);
    expect(err(deep)).toBe(
      `The filter exceeded the maximum depth limit. Try rewriting the filter so that it contains fewer nested conditions.\n51:106 ${deep}`,
    );
    expect(p('NOT '.repeat(197) + 'x = 1')).toBe('NOT ({x} = {1})');
    const nots = 'NOT '.repeat(199) + 'x = 1';
    expect(err(nots)).toBe(
      `The filter exceeded the maximum depth limit. Try rewriting the filter so that it contains fewer nested conditions.\n797:802 ${nots}`,
    );
  });

  it('accepts 2000 conditions in one filter and refuses 2001, in both forms', () => {
    const ors = (n: number) => Array.from({ length: n }, (_, i) => `id = ${i}`).join(' OR ');
    expect(parseFilter(ors(2000), { code: 'invalid_search_filter' })).not.toBeNull();
    for (const filter of [ors(2001), [ors(1000), [ors(1000), 'id = x']]]) {
      let caught: unknown = null;
      try {
        parseFilter(filter, { code: 'invalid_document_filter' });
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(ApiError);
      expect((caught as ApiError).code).toBe('invalid_document_filter');
      expect((caught as ApiError).message).toBe("Too many filter conditions, can't process more than 2000 filters.");
    }
  });

  it('treats a blank filter as no filter', () => {
    expect(parseFilterString('')).toBeNull();
    expect(parseFilterString('  \n ')).toBeNull();
  });
});

describe('filter syntax errors', () => {
  it('reports the reference diagnostics with start:end spans', () => {
    expect(err('channel = Ponce = 12')).toBe(
      'Found unexpected characters at the end of the filter: `= 12`. You probably forgot an `OR` or an `AND` rule.\n17:21 channel = Ponce = 12',
    );
    expect(err('channel =    ')).toBe('Was expecting a value but instead got nothing.\n14:14 channel =    ');
    expect(err('channel = 🐻 AND followers < 100')).toBe('Was expecting a value but instead got `🐻`.\n11:12 channel = 🐻 AND followers < 100');
    expect(err("'OR'")).toBe(`Was expecting an operation ${OPS} at \`\\'OR\\'\`.\n1:5 'OR'`);
    expect(err('OR')).toBe(
      'Was expecting a value but instead got `OR`, which is a reserved keyword. To use `OR` as a field name or a value, surround it by quotes.\n1:3 OR',
    );
    expect(err('channel Ponce')).toBe(`Was expecting an operation ${OPS} at \`channel Ponce\`.\n1:14 channel Ponce`);
    expect(err('title & Glass')).toBe(`Was expecting an operation ${OPS} at \`title & Glass\`.\n1:14 title & Glass`);
    expect(err('channel = Ponce OR')).toBe(`Was expecting an operation ${OPS} but instead got nothing.\n19:19 channel = Ponce OR`);
    expect(err('title = Glass XOR title = Glass')).toBe(
      'Found unexpected characters at the end of the filter: `XOR title = Glass`. You probably forgot an `OR` or an `AND` rule.\n15:32 title = Glass XOR title = Glass',
    );
    expect(err("channel = ponce ORdog != 'bernese mountain'")).toBe(
      "Found unexpected characters at the end of the filter: `ORdog != \\'bernese mountain\\'`. You probably forgot an `OR` or an `AND` rule.\n17:44 channel = ponce ORdog != 'bernese mountain'",
    );
    expect(err('colour NOT EXIST')).toBe(`Was expecting an operation ${OPS} at \`colour NOT EXIST\`.\n1:17 colour NOT EXIST`);
    expect(err('subscribers 100 TO1000')).toBe(`Was expecting an operation ${OPS} at \`subscribers 100 TO1000\`.\n1:23 subscribers 100 TO1000`);
    expect(err('value IS NOT')).toBe(`Was expecting an operation ${OPS} at \`value IS NOT\`.\n1:13 value IS NOT`);
    expect(err('x = EXISTS')).toBe(
      'Was expecting a value but instead got `EXISTS`, which is a reserved keyword. To use `EXISTS` as a field name or a value, surround it by quotes.\n5:11 x = EXISTS',
    );
    expect(err('AND = 8')).toContain('instead got `AND`, which is a reserved keyword.');
    expect(err('NOT OR EXISTS AND EXISTS NOT EXISTS')).toMatch(/got `OR`, which.*\n5:7 NOT OR/s);
  });

  it('reports unclosed quotes and parentheses', () => {
    expect(err("channel = 'ponce")).toBe("Expression `\\'ponce` is missing the following closing delimiter: `'`.\n11:17 channel = 'ponce");
    expect(err('channel = "ponce')).toBe('Expression `\\"ponce` is missing the following closing delimiter: `"`.\n11:17 channel = "ponce');
    expect(err('channel = mv OR (followers >= 1000')).toBe(
      'Expression `(followers >= 1000` is missing the following closing delimiter: `)`.\n17:35 channel = mv OR (followers >= 1000',
    );
    expect(err('channel = mv OR followers >= 1000)')).toBe(
      'Found unexpected characters at the end of the filter: `)`. You probably forgot an `OR` or an `AND` rule.\n34:35 channel = mv OR followers >= 1000)',
    );
  });

  it('reports malformed IN lists', () => {
    expect(err('colour IN blue, green]')).toBe('Expected `[` after `IN` keyword.\n11:23 colour IN blue, green]');
    expect(err("colour IN [blue, green, 'blue' > 2]")).toBe(
      "Expected only comma-separated field names inside `IN[..]` but instead found `> 2]`.\n32:36 colour IN [blue, green, 'blue' > 2]",
    );
    expect(err('colour IN [blue, green, AND]')).toBe(
      'Expected only comma-separated field names inside `IN[..]` but instead found `AND]`.\n25:29 colour IN [blue, green, AND]',
    );
    expect(err('colour IN [blue, green')).toBe('Expected matching `]` after the list of field names given to `IN[`\n23:23 colour IN [blue, green');
    expect(err("colour IN ['blue, green")).toBe(
      "Expression `\\'blue, green` is missing the following closing delimiter: `'`.\n12:24 colour IN ['blue, green",
    );
  });

  it('reports misused and malformed geo expressions', () => {
    expect(err('_geoRadius')).toBe(
      'The `_geoRadius` filter must be in the form: `_geoRadius(latitude, longitude, radius, optionalResolution)`.\n1:11 _geoRadius',
    );
    expect(err('_geoRadius = 12')).toMatch(/must be in the form.*\n1:16 _geoRadius = 12$/s);
    expect(err('_geoRadius(1, 2)')).toBe('Was expecting 3 or 4 arguments for `_geoRadius`, but instead found 2.\n17:17 _geoRadius(1, 2)');
    expect(err('_geoBoundingBox(1.0, 1.0)')).toBe(
      'The `_geoBoundingBox` filter expects two pairs of arguments: `_geoBoundingBox([latitude, longitude], [latitude, longitude])`.\n1:26 _geoBoundingBox(1.0, 1.0)',
    );
    expect(err('_geoPolygon([1, 2], [3, 4])')).toBe(
      'The `_geoPolygon` filter expects at least 3 points but only 2 were specified.\n28:28 _geoPolygon([1, 2], [3, 4])',
    );
    expect(err('_geoPoint(12, 13, 14)')).toBe(`\`_geoPoint\` ${GEO}\n1:22 _geoPoint(12, 13, 14)`);
    expect(err('position <= _geoPoint(12, 13, 14)')).toBe(`\`_geoPoint\` ${GEO}\n13:34 position <= _geoPoint(12, 13, 14)`);
    expect(err('_geoDistance = Glass')).toBe(`\`_geoDistance\` ${GEO}\n1:21 _geoDistance = Glass`);
    expect(err('_geo = Glass')).toBe(`\`_geo\` ${GEO}\n1:13 _geo = Glass`);
    expect(err('position <= _geoRadius(12, 13, 14)')).toBe(
      "The `_geoRadius` filter is an operation and can't be used as a value.\n13:35 position <= _geoRadius(12, 13, 14)",
    );
    expect(err('x = _geoPolygon([1,2],[3,4],[5,6])')).toMatch(/^The `_geoPolygon` filter is an operation/);
  });

  it('parses _foreign(field, filter) and refuses nested or malformed ones', () => {
    expect(p('genres = action AND _foreign(author, birthday STARTS WITH "1958-" AND popularity >= 3.5)')).toBe(
      'AND[{genres} = {action}, _foreign({author}, AND[{birthday} STARTS WITH {1958-}, {popularity} >= {3.5}, ]), ]',
    );
    expect(p('NOT _foreign( "related authors" , id IN [a1, a2])')).toBe('NOT (_foreign({related authors}, {id} IN[{a1}, {a2}, ]))');
    expect(p('_foreign = 1')).toBe('{_foreign} = {1}');
    expect(err('_foreign(author, id = a1 AND _foreign(related_authors, id = a2))')).toBe(
      'Nested foreign filters are not supported\n10:16 _foreign(author, id = a1 AND _foreign(related_authors, id = a2))',
    );
    expect(err('_foreign(author)')).toMatch(/^The `_foreign` filter must be in the form: `_foreign\(field, filter\)`.*\n1:17 _foreign\(author\)$/s);
    expect(err('_foreign(author, id = a1')).toMatch(/^The `_foreign` filter must be in the form/);
  });

  it('counts span columns in code points from the start of the line', () => {
    expect(err('tîtle = 🐻 AND x = 1')).toBe('Was expecting a value but instead got `🐻`.\n9:10 tîtle = 🐻 AND x = 1');
    expect(err('a = 1\nOR b = ')).toBe('Was expecting a value but instead got nothing.\n8:8 a = 1\nOR b = ');
  });
});
