import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, Interpreter, type Limits } from '../../src/engine/rhai/interpreter.js';
import { RhaiError } from '../../src/engine/rhai/lexer.js';
import { parseScript } from '../../src/engine/rhai/parser.js';
import { fromJson, toJson } from '../../src/engine/rhai/values.js';

/** Runs `src` with `doc` (and `context`) in scope; returns `doc` as JSON afterwards. */
function edit(src: string, doc: unknown, context?: unknown, limits: Partial<Limits> = {}): unknown {
  const run = new Interpreter(parseScript(src), { ...DEFAULT_LIMITS, ...limits });
  const out = run.run({ doc: fromJson(doc) }, context === undefined ? {} : { context: fromJson(context) });
  return toJson(out['doc']!);
}

function error(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(RhaiError);
    return (e as Error).message;
  }
  throw new Error('no error');
}

describe('the Rhai subset', () => {
  it('assigns document fields, with string and number operations', () => {
    expect(edit('doc.title = doc.title.to_upper(); doc.n += 1; doc.half = doc.n / 2; doc.f = doc.n * 1.5;', { title: 'dune', n: 4 })).toEqual({
      f: 7.5,
      half: 2,
      n: 5,
      title: 'DUNE',
    });
    expect(edit('doc.s = `${doc.a} has ${doc.b.len()} items, first ${doc.b[0]}`;', { a: 'x', b: [1, 2] })).toEqual({ a: 'x', b: [1, 2], s: 'x has 2 items, first 1' });
    expect(edit('doc.t.trim(); doc.r = doc.t; doc.r.replace("b", "c"); doc.sub = doc.t.sub_string(1, 2);', { t: '  abc ' })).toEqual({ r: 'acc', sub: 'bc', t: 'abc' });
    expect(edit('doc.x = 7 % 3; doc.y = 2 ** 10; doc.z = -(3 - 5); doc.w = 10 / 4.0;', {})).toEqual({ x: 1, y: 1024, z: 2, w: 2.5 });
    expect(edit('doc.c = "a" + 1 + true;', {})).toEqual({ c: 'a1true' });
  });

  it('runs if/else, loops, break and continue, closures and functions', () => {
    const src = `
      fn double(x) { x * 2 }
      let total = 0;
      for i in 0..10 {
        if i == 7 { break; }
        if i % 2 == 0 { continue; }
        total += i;
      }
      let n = 0;
      while n < 3 { n += 1; }
      let k = 0;
      loop { k += 1; if k > 4 { break; } }
      doc.total = total;                       // 1 + 3 + 5
      doc.n = n;
      doc.k = k;
      doc.d = double(21);
      doc.evens = doc.list.filter(|x| x % 2 == 0).map(|x| x * 10);
      doc.sum = doc.list.reduce(|acc, x| acc + x, 0);
      doc.kind = if doc.total > 5 { "big" } else { "small" };
      for (x, i) in ["a", "b"] { doc["k" + i] = x; }
    `;
    expect(edit(src, { list: [1, 2, 3, 4] })).toEqual({
      d: 42,
      evens: [20, 40],
      k: 5,
      k0: 'a',
      k1: 'b',
      kind: 'big',
      list: [1, 2, 3, 4],
      n: 3,
      sum: 10,
      total: 9,
    });
  });

  it('reads context, tests membership and removes fields or the whole document', () => {
    expect(edit('if "tags" in doc { doc.tags.push(context.tag); } doc.remove("old");', { tags: ['a'], old: 1 }, { tag: 'b' })).toEqual({ tags: ['a', 'b'] });
    expect(edit('if doc.id == 2 { doc = (); }', { id: 2 })).toBe(null);
    expect(edit('doc.missing = doc.nothing ?? "default"; doc.deep = doc.a?.b;', { a: null })).toEqual({ a: null, deep: null, missing: 'default' });
    expect(edit('let copy = doc.tags; copy.push("x"); doc.n = copy.len();', { tags: [] })).toEqual({ n: 1, tags: [] });
  });

  it('keeps integers and floats apart, and reports overflow and division by zero', () => {
    expect(edit('doc.a = 7 / 2; doc.b = 7.0 / 2; doc.c = 7.to_float() / 2;', {})).toEqual({ a: 3, b: 3.5, c: 3.5 });
    expect(error(() => edit('doc.x = 9223372036854775807 + 1;', {}))).toMatch(/^Arithmetic overflow/);
    expect(error(() => edit('doc.x = 1 / 0;', {}))).toBe('Division by zero: 1 / 0 (line 1, position 11)');
  });

  it('stops runaway functions with the operation limit and the size limits', () => {
    expect(error(() => edit('loop { }', {}))).toMatch(/^Too many operations/);
    expect(error(() => edit('let i = 0; while true { i += 1; }', {}, undefined, { maxOperations: 5_000 }))).toMatch(/^Too many operations/);
    expect(error(() => edit('let s = "x"; loop { s += s; }', {}))).toMatch(/^Length of string too large/);
    expect(error(() => edit('let a = []; loop { a.push(1); }', {}))).toMatch(/^Size of array too large/);
    expect(error(() => edit('fn f(x) { f(x) } f(1);', {}))).toMatch(/^Stack overflow/);
  });

  it('stops a function that runs too long by the clock', () => {
    const started = Date.now();
    expect(error(() => edit('let n = 0; loop { n += 1; }', {}, undefined, { maxOperations: Number.MAX_SAFE_INTEGER, timeoutMs: 100 }))).toMatch(/^Script timed out/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('explains syntax errors and what it does not support', () => {
    expect(error(() => parseScript('doc.x = 1 doc.y = 2'))).toBe("Expecting ';' to terminate this statement, found 'doc' (line 1, position 11)");
    expect(error(() => parseScript('doc.x = "abc'))).toBe('Unterminated string literal (line 1, position 9)');
    expect(error(() => parseScript('switch doc.x { 1 => 2 }'))).toBe('`switch` expressions are not supported in document edition functions (line 1, position 1)');
    expect(error(() => parseScript('import "x" as y;'))).toMatch(/^modules \(`import`\) are not supported/);
    expect(error(() => parseScript('let = 3;'))).toBe("Expecting a variable name, found '=' (line 1, position 5)");
    expect(error(() => parseScript('doc.x = ;'))).toBe("Unexpected ';' (line 1, position 9)");
    expect(error(() => edit('doc.t = timestamp();', {}))).toMatch(/^Function 'timestamp' is not available/);
    expect(error(() => edit('doc.x = doc.y.nope();', { y: 1 }))).toBe('Function not found: nope (i64) (line 1, position 14)');
    expect(error(() => edit('let x = y;', {}))).toBe('Variable not found: y (line 1, position 9)');
    expect(error(() => edit('const C = 1; C = 2;', {}))).toBe('Cannot modify constant C (line 1, position 16)');
  });

  it('catches thrown errors with try/catch', () => {
    expect(edit('try { throw "bad"; } catch (e) { doc.err = e; }', {})).toEqual({ err: 'bad' });
    expect(error(() => edit('throw "bad";', {}))).toBe('Runtime error: bad (line 1, position 1)');
  });
});
