// Rhai's standard functions that document edition functions use, on strings, numbers, arrays
// and maps. Called as methods (`s.to_upper()`) or functions (`to_upper(s)`). A method that
// changes a string in place returns the new string as `self`: strings are values, and the
// interpreter writes it back where it came from. Arrays and maps change in place.

import { debug, display, equals, isMap, isRange, typeName, type RMap, type Value } from './values.js';

export interface Runtime {
  tick(n?: number): void;
  sized<T extends Value>(v: T): T;
  fail(message: string): never;
  take(v: Value): Value;
  callClosure(c: Value, args: Value[]): Value;
  operate(op: string, l: Value, r: Value): Value;
}

export interface CallResult {
  ret: Value;
  /** The receiver's new value, when a method changed a string. */
  self?: Value;
}

/** Functions that would make an edition give different results on different nodes or runs. */
const NON_DETERMINISTIC = new Set(['timestamp', 'rand', 'random', 'now', 'sleep', 'elapsed']);

/** Methods that do not walk an array or a map, whatever its size (on strings, every method walks). */
const CONSTANT_TIME = new Set(['len', 'is_empty', 'push', 'pop', 'get', 'type_of', 'is_string', 'is_int', 'is_float', 'is_array', 'is_map', 'is_unit', 'is_bool']);
const MAP_CONSTANT_TIME = new Set(['contains', 'set', 'remove']);

function int(rt: Runtime, v: Value | undefined, what: string): number {
  if (typeof v !== 'bigint') rt.fail(`${what} must be an integer, found '${v === undefined ? 'nothing' : typeTag(v)}'`);
  return Number(v);
}

function typeTag(v: Value): string {
  return typeName(v);
}

function str(rt: Runtime, v: Value | undefined, what: string): string {
  if (typeof v !== 'string') rt.fail(`${what} must be a string, found '${v === undefined ? 'nothing' : typeTag(v)}'`);
  return v as string;
}

/** Character positions, as Rhai counts them in strings. */
function chars(s: string): string[] {
  return [...s];
}

function clampStart(len: number, start: number): number {
  if (start < 0) return Math.max(0, len + start);
  return Math.min(start, len);
}

function parseNumber(rt: Runtime, s: string, float: boolean): Value {
  const t = s.trim();
  if (float ? !/^[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+)$/.test(t) : !/^[+-]?\d+$/.test(t)) {
    rt.fail(`Error parsing ${float ? 'float' : 'integer'} number '${s}'`);
  }
  return float ? Number(t) : BigInt(t);
}

function compare(rt: Runtime, a: Value, b: Value): number {
  if (rt.operate('<', a, b) === true) return -1;
  if (rt.operate('>', a, b) === true) return 1;
  return 0;
}

function stringMethod(rt: Runtime, name: string, s: string, args: Value[]): CallResult | undefined {
  const cs = () => chars(s);
  switch (name) {
    case 'len':
      return { ret: BigInt(cs().length) };
    case 'is_empty':
      return { ret: s.length === 0 };
    case 'to_upper':
      return { ret: rt.sized(s.toUpperCase()) };
    case 'to_lower':
      return { ret: rt.sized(s.toLowerCase()) };
    case 'make_upper':
      return { ret: null, self: rt.sized(s.toUpperCase()) };
    case 'make_lower':
      return { ret: null, self: rt.sized(s.toLowerCase()) };
    case 'trim':
      return { ret: null, self: s.trim() };
    case 'clear':
      return { ret: null, self: '' };
    case 'to_string':
      return { ret: s };
    case 'to_chars':
      return { ret: rt.sized(cs()) };
    case 'contains':
      return { ret: s.includes(str(rt, args[0], 'The text to look for')) };
    case 'starts_with':
      return { ret: s.startsWith(str(rt, args[0], 'The prefix')) };
    case 'ends_with':
      return { ret: s.endsWith(str(rt, args[0], 'The suffix')) };
    case 'index_of': {
      const needle = str(rt, args[0], 'The text to look for');
      const from = args[1] === undefined ? 0 : clampStart(cs().length, int(rt, args[1], 'The start position'));
      const prefix = cs().slice(0, from).join('');
      const at = s.indexOf(needle, prefix.length);
      return { ret: at < 0 ? -1n : BigInt(chars(s.slice(0, at)).length) };
    }
    case 'sub_string': {
      const all = cs();
      let start: number;
      let len: number;
      if (args[0] !== undefined && isRange(args[0])) {
        start = Number(args[0].range[0]);
        len = Number(args[0].range[1]) - start;
      } else {
        start = clampStart(all.length, int(rt, args[0], 'The start position'));
        len = args[1] === undefined ? all.length - start : int(rt, args[1], 'The length');
      }
      return { ret: all.slice(start, start + Math.max(0, len)).join('') };
    }
    case 'split': {
      if (args[0] === undefined) return { ret: rt.sized(s.split(/\s+/).filter((x) => x !== '')) };
      if (typeof args[0] === 'bigint') {
        const at = clampStart(cs().length, Number(args[0]));
        return { ret: [cs().slice(0, at).join(''), cs().slice(at).join('')] };
      }
      const sep = str(rt, args[0], 'The separator');
      const parts = s.split(sep);
      if (args[1] !== undefined) {
        const n = int(rt, args[1], 'The number of segments');
        if (n <= 0) return { ret: [] };
        return { ret: rt.sized([...parts.slice(0, n - 1), parts.slice(n - 1).join(sep)]) };
      }
      return { ret: rt.sized(parts) };
    }
    case 'replace': {
      const from = str(rt, args[0], 'The text to replace');
      const to = str(rt, args[1], 'The replacement');
      rt.tick(s.length >> 10);
      return { ret: null, self: rt.sized(from === '' ? s : s.split(from).join(to)) };
    }
    case 'remove': {
      const what = str(rt, args[0], 'The text to remove');
      return { ret: null, self: what === '' ? s : s.split(what).join('') };
    }
    case 'truncate':
      return { ret: null, self: cs().slice(0, Math.max(0, int(rt, args[0], 'The length'))).join('') };
    case 'pad': {
      const n = int(rt, args[0], 'The length');
      const fill = str(rt, args[1], 'The padding');
      let out = s;
      while (chars(out).length < n && fill !== '') out += fill;
      return { ret: null, self: rt.sized(chars(out).slice(0, Math.max(n, cs().length)).join('')) };
    }
    case 'get': {
      const all = cs();
      const i = int(rt, args[0], 'The position');
      const at = i < 0 ? all.length + i : i;
      return { ret: all[at] ?? null };
    }
    case 'parse_int':
      return { ret: parseNumber(rt, s, false) };
    case 'parse_float':
      return { ret: parseNumber(rt, s, true) };
  }
  return undefined;
}

function numberMethod(rt: Runtime, name: string, n: bigint | number, args: Value[]): CallResult | undefined {
  const f = Number(n);
  switch (name) {
    case 'abs':
      return { ret: typeof n === 'bigint' ? (n < 0n ? -n : n) : Math.abs(n) };
    case 'sign':
      return { ret: typeof n === 'bigint' ? (n > 0n ? 1n : n < 0n ? -1n : 0n) : BigInt(Math.sign(n)) };
    case 'is_zero':
      return { ret: f === 0 };
    case 'is_odd':
      return typeof n === 'bigint' ? { ret: n % 2n !== 0n } : undefined;
    case 'is_even':
      return typeof n === 'bigint' ? { ret: n % 2n === 0n } : undefined;
    case 'to_string':
      return { ret: display(n) };
    case 'to_int':
      if (typeof n === 'bigint') return { ret: n };
      if (!Number.isFinite(n)) rt.fail(`Integer overflow: to_int(${n})`);
      return { ret: BigInt(Math.trunc(n)) };
    case 'to_float':
      return { ret: f };
    case 'floor':
      return { ret: Math.floor(f) };
    case 'ceiling':
      return { ret: Math.ceil(f) };
    case 'round':
      return { ret: Math.sign(f) * Math.round(Math.abs(f)) };
    case 'int':
      return { ret: Math.trunc(f) };
    case 'fraction':
      return { ret: f - Math.trunc(f) };
    case 'sqrt':
      return { ret: Math.sqrt(f) };
    case 'min':
    case 'max': {
      const other = args[0];
      if (typeof other !== 'bigint' && typeof other !== 'number') rt.fail(`Function not found: ${name} (${typeName(n)}, ${other === undefined ? '' : typeName(other)})`);
      const pick = name === 'min' ? Number(other) < f : Number(other) > f;
      return { ret: pick ? other! : n };
    }
  }
  return undefined;
}

function arrayMethod(rt: Runtime, name: string, a: Value[], args: Value[]): CallResult | undefined {
  const fnArg = (i = 0) => {
    const c = args[i];
    if (c === undefined) rt.fail(`Function not found: ${name} (array) - a closure is expected`);
    return c!;
  };
  const each = <T>(fn: (x: Value, i: number) => T): T[] => a.map((x, i) => fn(x, i));
  const test = (x: Value, i: number): boolean => {
    const r = rt.callClosure(fnArg(), paramsFor(fnArg(), x, i));
    if (typeof r !== 'boolean') rt.fail(`The closure must return a boolean, found '${typeName(r)}'`);
    return r as boolean;
  };
  switch (name) {
    case 'len':
      return { ret: BigInt(a.length) };
    case 'is_empty':
      return { ret: a.length === 0 };
    case 'push':
      if (args.length !== 1) return undefined;
      a.push(args[0]!);
      rt.sized(a);
      return { ret: null };
    case 'append':
      if (!Array.isArray(args[0])) rt.fail(`Function not found: append (array, ${args[0] === undefined ? '' : typeName(args[0])})`);
      // A loop, not a spread: a document's array may be long enough to overflow the stack.
      for (const v of args[0] as Value[]) a.push(v);
      rt.sized(a);
      return { ret: null };
    case 'insert': {
      const i = int(rt, args[0], 'The position');
      const at = i < 0 ? Math.max(0, a.length + i) : Math.min(i, a.length);
      a.splice(at, 0, args[1] ?? null);
      rt.sized(a);
      return { ret: null };
    }
    case 'pop':
      return { ret: a.pop() ?? null };
    case 'shift':
      return { ret: a.shift() ?? null };
    case 'remove': {
      const i = int(rt, args[0], 'The position');
      const at = i < 0 ? a.length + i : i;
      if (at < 0 || at >= a.length) return { ret: null };
      return { ret: a.splice(at, 1)[0]! };
    }
    case 'clear':
      a.length = 0;
      return { ret: null };
    case 'truncate':
      a.length = Math.min(a.length, Math.max(0, int(rt, args[0], 'The length')));
      return { ret: null };
    case 'contains':
      return { ret: a.some((x) => equals(x, args[0] ?? null)) };
    case 'index_of': {
      if (args[0] !== undefined && typeof args[0] === 'object' && args[0] !== null && 'closure' in args[0]) {
        return { ret: BigInt(a.findIndex((x, i) => test(x, i))) };
      }
      return { ret: BigInt(a.findIndex((x) => equals(x, args[0] ?? null))) };
    }
    case 'get': {
      const i = int(rt, args[0], 'The position');
      return { ret: a[i < 0 ? a.length + i : i] ?? null };
    }
    case 'reverse':
      a.reverse();
      return { ret: null };
    case 'sort':
      rt.tick(a.length);
      if (args[0] !== undefined) {
        a.sort((x, y) => {
          const r = rt.callClosure(args[0]!, [x, y]);
          if (typeof r !== 'bigint') rt.fail(`The sort closure must return an integer, found '${typeName(r)}'`);
          return Number(r);
        });
      } else a.sort((x, y) => compare(rt, x, y));
      return { ret: null };
    case 'dedup': {
      const out: Value[] = [];
      for (const x of a) if (out.length === 0 || !equals(out[out.length - 1]!, x)) out.push(x);
      replaceItems(a, out);
      return { ret: null };
    }
    case 'extract': {
      const start = clampStart(a.length, int(rt, args[0], 'The start position'));
      const len = args[1] === undefined ? a.length - start : int(rt, args[1], 'The length');
      return { ret: rt.take(a.slice(start, start + Math.max(0, len))) };
    }
    case 'filter':
      return { ret: a.filter((x, i) => test(x, i)) };
    case 'retain': {
      const kept = a.filter((x, i) => test(x, i));
      replaceItems(a, kept);
      return { ret: null };
    }
    case 'map':
      return { ret: rt.sized(each((x, i) => rt.callClosure(fnArg(), paramsFor(fnArg(), x, i)))) };
    case 'for_each':
      each((x, i) => rt.callClosure(fnArg(), paramsFor(fnArg(), x, i)));
      return { ret: null };
    case 'some':
    case 'any':
      return { ret: a.some((x, i) => test(x, i)) };
    case 'all':
      return { ret: a.every((x, i) => test(x, i)) };
    case 'find':
      return { ret: a.find((x, i) => test(x, i)) ?? null };
    case 'reduce': {
      let acc: Value = args[1] ?? null;
      a.forEach((x, i) => (acc = rt.callClosure(fnArg(), paramsFor(fnArg(), acc, i, x))));
      return { ret: acc };
    }
    case 'to_string':
      return { ret: debug(a) };
  }
  return undefined;
}

/** A closure may take the item, or the item and its index (or the accumulator, the item and its index). */
function paramsFor(c: Value, first: Value, i: number, item?: Value): Value[] {
  const n = (c as { closure: { params: string[] } }).closure.params.length;
  if (item !== undefined) return n >= 3 ? [first, item, BigInt(i)] : [first, item];
  return n >= 2 ? [first, BigInt(i)] : [first];
}

function mapMethod(rt: Runtime, name: string, m: RMap, args: Value[]): CallResult | undefined {
  const key = () => str(rt, args[0], 'The property name');
  switch (name) {
    case 'len':
      return { ret: BigInt(m.size) };
    case 'is_empty':
      return { ret: m.size === 0 };
    case 'keys':
      return { ret: [...m.keys()] };
    case 'values':
      return { ret: rt.take([...m.values()]) };
    case 'contains':
      return { ret: m.has(key()) };
    case 'get':
      return { ret: m.get(key()) ?? null };
    case 'set':
      m.set(key(), args[1] ?? null);
      rt.sized(m);
      return { ret: null };
    case 'remove': {
      const k = key();
      const v = m.get(k) ?? null;
      m.delete(k);
      return { ret: v };
    }
    case 'clear':
      m.clear();
      return { ret: null };
    case 'mixin':
    case 'fill_with': {
      const other = args[0];
      if (!isMap(other)) rt.fail(`Function not found: ${name} (map, ${other === undefined ? '' : typeName(other)})`);
      for (const [k, v] of other as RMap) if (name === 'mixin' || !m.has(k)) m.set(k, v);
      rt.sized(m);
      return { ret: null };
    }
    case 'to_string':
      return { ret: debug(m) };
  }
  return undefined;
}

/** Calls `name` with `self` as its first argument (undefined for a function called without arguments). */
export function callBuiltin(rt: Runtime, name: string, self: Value | undefined, args: Value[]): CallResult {
  // Most methods walk their receiver: long strings and collections cost in proportion.
  const cheap = (typeof self !== 'string' && CONSTANT_TIME.has(name)) || (self instanceof Map && MAP_CONSTANT_TIME.has(name));
  rt.tick(1 + (cheap ? 0 : typeof self === 'string' ? self.length >> 10 : Array.isArray(self) ? self.length >> 6 : self instanceof Map ? self.size >> 6 : 0));
  if (NON_DETERMINISTIC.has(name)) {
    rt.fail(`Function '${name}' is not available: a document edition must give the same result on every node of a cluster`);
  }
  if (name === 'print' || name === 'debug') return { ret: null };
  if (self !== undefined) {
    if (name === 'type_of') return { ret: typeName(self) };
    if (name === 'to_string' && (self === null || typeof self === 'boolean')) return { ret: display(self) };
    if (name === 'to_debug') return { ret: debug(self) };
    if (name === 'is_string' || name === 'is_int' || name === 'is_float' || name === 'is_array' || name === 'is_map' || name === 'is_unit' || name === 'is_bool') {
      const expected = { is_string: 'string', is_int: 'i64', is_float: 'f64', is_array: 'array', is_map: 'map', is_unit: '()', is_bool: 'bool' }[name];
      return { ret: typeName(self) === expected };
    }
    let r: CallResult | undefined;
    if (typeof self === 'string') r = stringMethod(rt, name, self, args);
    else if (typeof self === 'bigint' || typeof self === 'number') r = numberMethod(rt, name, self, args);
    else if (Array.isArray(self)) r = arrayMethod(rt, name, self, args);
    else if (isMap(self)) r = mapMethod(rt, name, self, args);
    if (r) return r;
    if (name === 'max' || name === 'min') {
      const other = args[0];
      if (other !== undefined && typeof self === typeof other && typeof self === 'string') {
        return { ret: (name === 'max') === (self > (other as string)) ? self : other };
      }
    }
  }
  const types = [self, ...args].filter((v): v is Value => v !== undefined).map(typeName).join(', ');
  return rt.fail(`Function not found: ${name} (${types})`);
}

/** Replaces an array's items in place, without spreading them into a call (a long array would overflow the stack). */
function replaceItems(a: Value[], items: Value[]): void {
  a.length = items.length;
  for (let i = 0; i < items.length; i++) a[i] = items[i]!;
}
