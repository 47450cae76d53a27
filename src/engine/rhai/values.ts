// Rhai values as the interpreter holds them: `()` is null, INT (i64) a bigint, FLOAT a number,
// strings and characters strings, arrays JS arrays, object maps JS Maps (Rhai keeps their keys
// sorted), closures and ranges small objects. JSON documents go in and come out through here.

import type { Expr } from './parser.js';

export interface Closure {
  closure: Extract<Expr, { t: 'closure' }>;
  env: unknown;
}
export interface Range {
  range: [bigint, bigint];
}
export type RMap = Map<string, Value>;
export type Value = null | boolean | bigint | number | string | Value[] | RMap | Closure | Range;

export const I64_MIN = -(2n ** 63n);
export const I64_MAX = 2n ** 63n - 1n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export function isMap(v: Value): v is RMap {
  return v instanceof Map;
}

export function isClosure(v: Value): v is Closure {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Map) && 'closure' in v;
}

export function isRange(v: Value): v is Range {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Map) && 'range' in v;
}

/** Rhai's name of a value's type, as its errors print it. */
export function typeName(v: Value): string {
  if (v === null) return '()';
  switch (typeof v) {
    case 'boolean':
      return 'bool';
    case 'bigint':
      return 'i64';
    case 'number':
      return 'f64';
    case 'string':
      return 'string';
  }
  if (Array.isArray(v)) return 'array';
  if (v instanceof Map) return 'map';
  if (isClosure(v)) return 'Fn';
  return 'range';
}

/** A JSON value as a Rhai value: integers become INT, other numbers FLOAT, objects maps. */
export function fromJson(v: unknown): Value {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case 'boolean':
    case 'string':
      return v;
    case 'number':
      return Number.isInteger(v) ? BigInt(v) : v;
    case 'bigint':
      // An integer a double cannot hold (see exact-json.ts): kept exactly.
      return v;
  }
  if (Array.isArray(v)) return v.map(fromJson);
  const m: RMap = new Map();
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) m.set(k, fromJson(x));
  return m;
}

/** Rhai's string order for map keys (byte order of UTF-8, as a BTreeMap keeps them). */
function keyOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** A Rhai value as JSON; maps come out with their keys sorted, as Rhai's maps are. */
export function toJson(v: Value): unknown {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
  // Integers a double holds exactly go back as numbers; the others stay bigints, written as their digits.
  if (typeof v === 'bigint') return v >= -MAX_SAFE && v <= MAX_SAFE ? Number(v) : v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (Array.isArray(v)) return v.map(toJson);
  if (v instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const k of [...v.keys()].sort(keyOrder)) out[k] = toJson(v.get(k)!);
    return out;
  }
  throw new TypeError(`a value of type '${typeName(v)}' cannot be stored in a document`);
}

/** A value copied for storing elsewhere: Rhai arrays and maps are values, not references. */
export function copy(v: Value): Value {
  if (Array.isArray(v)) return v.map(copy);
  if (v instanceof Map) {
    const m: RMap = new Map();
    for (const [k, x] of v) m.set(k, copy(x));
    return m;
  }
  return v;
}

/** A rough size, in items and characters, for charging operations. */
export function sizeOf(v: Value): number {
  if (typeof v === 'string') return v.length;
  if (Array.isArray(v)) return v.reduce<number>((n, x) => n + 1 + sizeOf(x), 0);
  if (v instanceof Map) {
    let n = 0;
    for (const [k, x] of v) n += 1 + k.length + sizeOf(x);
    return n;
  }
  return 1;
}

/** How Rhai prints a value with `to_string` or in a `${}` template. */
export function display(v: Value): string {
  if (v === null) return '';
  if (typeof v === 'string' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) < 1e16 ? v.toFixed(1) : String(v);
  return debug(v);
}

/** How Rhai prints a value inside an array or map (strings quoted). */
export function debug(v: Value): string {
  if (v === null) return '()';
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(debug).join(', ')}]`;
  if (v instanceof Map) return `#{${[...v.keys()].sort(keyOrder).map((k) => `${JSON.stringify(k)}: ${debug(v.get(k)!)}`).join(', ')}}`;
  if (isClosure(v)) return 'Fn(<closure>)';
  if (isRange(v)) return `${v.range[0]}..${v.range[1]}`;
  return display(v);
}

/** Rhai's `==`: same type and value (INT and FLOAT compare as numbers); arrays and maps item by item. */
export function equals(a: Value, b: Value): boolean {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) return Number(a) === Number(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equals(x, b[i]!));
  if (a instanceof Map && b instanceof Map) {
    if (a.size !== b.size) return false;
    for (const [k, x] of a) if (!b.has(k) || !equals(x, b.get(k)!)) return false;
    return true;
  }
  if (isRange(a) && isRange(b)) return a.range[0] === b.range[0] && a.range[1] === b.range[1];
  return a === b;
}
