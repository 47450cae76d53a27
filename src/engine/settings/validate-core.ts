import { ApiError, type ErrorCode } from '../../errors/api-error.js';

/**
 * Building blocks for settings validation. The settings body is checked by hand rather than
 * with the route schema DSL because the reference's settings errors follow rules the DSL does
 * not express: unknown fields inside a setting carry that setting's code, integers have byte
 * widths with their own overflow wording, and sets come back sorted.
 */

/** Where a value sits in the body and which error code a problem there carries. */
export interface VCtx {
  path: string;
  code: ErrorCode;
}

export function at(ctx: VCtx, key: string): VCtx {
  return { ...ctx, path: `${ctx.path}.${key}` };
}

export function index(ctx: VCtx, i: number): VCtx {
  return { ...ctx, path: `${ctx.path}[${i}]` };
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function location(ctx: VCtx, article: string): string {
  return ctx.path ? ` ${article} \`${ctx.path}\`` : '';
}

function describeValue(v: unknown): string {
  if (v === null) return 'null';
  let kind: string;
  if (Array.isArray(v)) kind = 'an array';
  else if (typeof v === 'string') kind = 'a string';
  else if (typeof v === 'boolean') kind = 'a boolean';
  else if (typeof v === 'number') kind = !Number.isInteger(v) ? 'a number' : v >= 0 ? 'a positive integer' : 'a negative integer';
  else kind = 'an object';
  return `${kind}: \`${JSON.stringify(v)}\``;
}

/** deserr's `IncorrectValueKind` error (null is named without its JSON text). */
export function wrongType(ctx: VCtx, expected: string, found: unknown): ApiError {
  return new ApiError(ctx.code, `Invalid value type${location(ctx, 'at')}: expected ${expected}, but found ${describeValue(found)}`);
}

/** deserr's `Unexpected` error: ``Invalid value at `.x`: <msg>``. */
export function invalidValue(ctx: VCtx, msg: string): ApiError {
  return new ApiError(ctx.code, `Invalid value${location(ctx, 'at')}: ${msg}`);
}

export function missingField(ctx: VCtx, field: string): ApiError {
  return new ApiError(ctx.code, `Missing field \`${field}\`${location(ctx, 'inside')}`);
}

/** True Damerau-Levenshtein distance (transpositions of non-adjacent edits allowed), on characters. */
export function damerauLevenshtein(a: string, b: string): number {
  const s = [...a];
  const t = [...b];
  const max = s.length + t.length;
  const last = new Map<string, number>();
  const d: number[][] = Array.from({ length: s.length + 2 }, () => new Array<number>(t.length + 2).fill(0));
  d[0]![0] = max;
  for (let i = 0; i <= s.length; i++) {
    d[i + 1]![0] = max;
    d[i + 1]![1] = i;
  }
  for (let j = 0; j <= t.length; j++) {
    d[0]![j + 1] = max;
    d[1]![j + 1] = j;
  }
  for (let i = 1; i <= s.length; i++) {
    let db = 0;
    for (let j = 1; j <= t.length; j++) {
      const k = last.get(t[j - 1]!) ?? 0;
      const l = db;
      let cost = 1;
      if (s[i - 1] === t[j - 1]) {
        cost = 0;
        db = j;
      }
      d[i + 1]![j + 1] = Math.min(
        d[i]![j]! + cost,
        d[i + 1]![j]! + 1,
        d[i]![j + 1]! + 1,
        d[k]![l]! + (i - k - 1) + 1 + (j - l - 1),
      );
    }
    last.set(s[i - 1]!, i);
  }
  return d[s.length + 1]![t.length + 1]!;
}

/** The reference's "did you mean" hint: the closest accepted word within a length-based budget. */
export function didYouMean(received: string, accepted: readonly string[]): string {
  const len = Buffer.byteLength(received);
  if (len <= 3) return '';
  const budget = len <= 7 ? 1 : len <= 12 ? 2 : len <= 17 ? 3 : len <= 24 ? 4 : 5;
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const a of accepted) {
    const dist = damerauLevenshtein(received, a);
    if (dist <= budget && dist < bestDistance) {
      best = a;
      bestDistance = dist;
    }
  }
  return best === null ? '' : `did you mean \`${best}\`? `;
}

const quoteList = (values: readonly string[]) => values.map((v) => `\`${v}\``).join(', ');

export function unknownValue(ctx: VCtx, value: string, accepted: readonly string[]): ApiError {
  return new ApiError(
    ctx.code,
    `Unknown value \`${value}\`${location(ctx, 'at')}: ${didYouMean(value, accepted)}expected one of ${quoteList(accepted)}`,
  );
}

export function expectObject(v: unknown, ctx: VCtx): Record<string, unknown> {
  if (!isPlainObject(v)) throw wrongType(ctx, 'an object', v);
  return v;
}

/** An object whose keys must all be in `accepted` (unknown keys are reported in body order). */
export function expectFields(v: unknown, ctx: VCtx, accepted: readonly string[]): Record<string, unknown> {
  const obj = expectObject(v, ctx);
  for (const key of Object.keys(obj)) {
    if (!accepted.includes(key)) {
      throw new ApiError(
        ctx.code,
        `Unknown field \`${key}\`${location(ctx, 'inside')}: ${didYouMean(key, accepted)}expected one of ${quoteList(accepted)}`,
      );
    }
  }
  return obj;
}

export function expectString(v: unknown, ctx: VCtx): string {
  if (typeof v !== 'string') throw wrongType(ctx, 'a string', v);
  return v;
}

export function expectBool(v: unknown, ctx: VCtx): boolean {
  if (typeof v !== 'boolean') throw wrongType(ctx, 'a boolean', v);
  return v;
}

export function expectNumber(v: unknown, ctx: VCtx): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw wrongType(ctx, 'a number', v);
  return v;
}

export const U8_MAX = 255;
export const U64_MAX = '18446744073709551615';

/** An unsigned integer; `max` is the width's largest value (u8 = 255), none for u64/usize. */
export function expectUint(v: unknown, ctx: VCtx, max?: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw wrongType(ctx, 'a positive integer', v);
  if (max !== undefined && v > max) {
    throw invalidValue(ctx, `value: \`${v}\` is too large to be deserialized, maximum value authorized is \`${max}\``);
  }
  return v;
}

/** A non-zero u64/usize, with deserr's wording for zero. */
export function expectNonZeroUint(v: unknown, ctx: VCtx): number {
  const n = expectUint(v, ctx);
  if (n === 0) {
    throw invalidValue(ctx, `a non-zero integer value lower than \`${U64_MAX}\` was expected, but found a zero`);
  }
  return n;
}

export function expectEnum<T extends string>(v: unknown, ctx: VCtx, accepted: readonly T[]): T {
  const s = expectString(v, ctx);
  if (!(accepted as readonly string[]).includes(s)) throw unknownValue(ctx, s, accepted);
  return s as T;
}

export function expectArray(v: unknown, ctx: VCtx): unknown[] {
  if (!Array.isArray(v)) throw wrongType(ctx, 'an array', v);
  return v;
}

export function expectStringArray(v: unknown, ctx: VCtx): string[] {
  return expectArray(v, ctx).map((x, i) => expectString(x, index(ctx, i)));
}

/** Byte order of UTF-8, which is how the reference's ordered sets and maps sort their keys. */
export function compareCodePoints(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** A set of strings as the reference keeps it: deduplicated and sorted. */
export function expectStringSet(v: unknown, ctx: VCtx): string[] {
  return [...new Set(expectStringArray(v, ctx))].sort(compareCodePoints);
}

/** An object rebuilt with its keys in the reference's map order. */
export function sortedKeys<T>(obj: Record<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const k of Object.keys(obj).sort(compareCodePoints)) out[k] = obj[k]!;
  return out;
}

/** A `{string: string}` map, keys sorted. */
export function expectStringMap(v: unknown, ctx: VCtx): Record<string, string> {
  const obj = expectObject(v, ctx);
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(obj)) out[k] = expectString(x, at(ctx, k));
  return sortedKeys(out);
}
