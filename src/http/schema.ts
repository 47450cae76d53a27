import { ApiError, type ErrorCode } from '../errors/api-error.js';
import { stringifyJson } from '../util/exact-json.js';

/**
 * Request schemas. One description of each body and query string serves twice: it validates
 * requests with the reference engine's error wording (deserr style: one error at a time, the
 * field's own error code, unknown fields refused with `bad_request`) and it produces the JSON
 * Schema published in the OpenAPI document, so the two cannot drift apart.
 */

export type Mode = 'json' | 'query';

export interface Ctx {
  path: string; // ".a.b[0]" in JSON mode, "a" (parameter name) in query mode
  code: ErrorCode;
  mode: Mode;
}

export type JsonSchema = Record<string, unknown>;

function describeKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  switch (typeof v) {
    case 'string':
      return 'a string';
    case 'number':
      if (Number.isInteger(v)) return v >= 0 ? 'a positive integer' : 'a negative integer';
      return 'a number';
    case 'bigint':
      return v >= 0n ? 'a positive integer' : 'a negative integer';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'an object';
    default:
      return typeof v;
  }
}

export function typeError(ctx: Ctx, expected: string, found: unknown): ApiError {
  const at = ctx.path ? ` at \`${ctx.path}\`` : '';
  // deserr names a null without repeating it: "but found null".
  const shown = found === null ? '' : `: \`${stringifyJson(found)}\``;
  return new ApiError(ctx.code, `Invalid value type${at}: expected ${expected}, but found ${describeKind(found)}${shown}`);
}

export function valueError(ctx: Ctx, reason: string): ApiError {
  if (ctx.mode === 'query') return new ApiError(ctx.code, `Invalid value in parameter \`${ctx.path}\`: ${reason}`);
  const at = ctx.path ? ` at \`${ctx.path}\`` : '';
  return new ApiError(ctx.code, `Invalid value${at}: ${reason}`);
}

function queryParseError(ctx: Ctx, raw: string, what: string): ApiError {
  return new ApiError(ctx.code, `Invalid value in parameter \`${ctx.path}\`: could not parse \`${raw}\` as ${what}`);
}

export abstract class Schema<T> {
  description?: string;
  abstract parse(value: unknown, ctx: Ctx): T;
  abstract jsonSchema(): JsonSchema;

  describe(text: string): this {
    this.description = text;
    return this;
  }

  protected withDescription(js: JsonSchema): JsonSchema {
    return this.description ? { ...js, description: this.description } : js;
  }

  nullable(): Schema<T | null> {
    return new NullableSchema(this);
  }
}

class NullableSchema<T> extends Schema<T | null> {
  constructor(private readonly inner: Schema<T>) {
    super();
  }
  parse(value: unknown, ctx: Ctx): T | null {
    if (value === null) return null;
    if (ctx.mode === 'query' && value === 'null') return null;
    return this.inner.parse(value, ctx);
  }
  jsonSchema(): JsonSchema {
    const js = this.inner.jsonSchema();
    const t = js['type'];
    if (typeof t === 'string') return { ...js, type: [t, 'null'] };
    return { oneOf: [js, { type: 'null' }] };
  }
}

class StringSchema extends Schema<string> {
  constructor(private readonly check?: (s: string, ctx: Ctx) => void, private readonly extra: JsonSchema = {}) {
    super();
  }
  parse(value: unknown, ctx: Ctx): string {
    if (typeof value !== 'string') throw typeError(ctx, 'a string', value);
    this.check?.(value, ctx);
    return value;
  }
  jsonSchema(): JsonSchema {
    return this.withDescription({ type: 'string', ...this.extra });
  }
}

class EnumSchema<T extends string> extends Schema<T> {
  constructor(private readonly values: readonly T[]) {
    super();
  }
  parse(value: unknown, ctx: Ctx): T {
    if (typeof value !== 'string') throw typeError(ctx, 'a string', value);
    if (!(this.values as readonly string[]).includes(value)) {
      const list = this.values.map((v) => `\`${v}\``).join(', ');
      const at = ctx.mode === 'query' ? ` for parameter \`${ctx.path}\`` : ctx.path ? ` at \`${ctx.path}\`` : '';
      throw new ApiError(ctx.code, `Unknown value \`${value}\`${at}: expected one of ${list}`);
    }
    return value as T;
  }
  jsonSchema(): JsonSchema {
    return this.withDescription({ type: 'string', enum: [...this.values] });
  }
}

class IntegerSchema extends Schema<number> {
  constructor(private readonly min: number | undefined, private readonly max: number | undefined) {
    super();
  }
  parse(value: unknown, ctx: Ctx): number {
    const positive = this.min !== undefined && this.min >= 0;
    const what = positive ? 'a positive integer' : 'an integer';
    let n: number;
    if (ctx.mode === 'query' && typeof value === 'string') {
      if (!/^[+-]?\d+$/.test(value.trim())) throw queryParseError(ctx, value, what);
      n = Number(value.trim());
    } else if (typeof value === 'bigint') {
      // A body read with its big integers exact (document ids): any other integer reads as JSON.parse reads it.
      n = Number(value);
    } else {
      if (typeof value !== 'number' || !Number.isInteger(value)) throw typeError(ctx, what, value);
      n = value;
    }
    if (this.min !== undefined && n < this.min) {
      if (ctx.mode === 'query') throw queryParseError(ctx, String(value), what);
      throw typeError(ctx, what, value);
    }
    if (this.max !== undefined && n > this.max) throw valueError(ctx, `the value must be at most ${this.max}`);
    return n;
  }
  jsonSchema(): JsonSchema {
    const js: JsonSchema = { type: 'integer' };
    if (this.min !== undefined) js['minimum'] = this.min;
    if (this.max !== undefined) js['maximum'] = this.max;
    return this.withDescription(js);
  }
}

class NumberSchema extends Schema<number> {
  parse(value: unknown, ctx: Ctx): number {
    if (ctx.mode === 'query' && typeof value === 'string') {
      const n = Number(value);
      if (value.trim() === '' || !Number.isFinite(n)) throw queryParseError(ctx, value, 'a number');
      return n;
    }
    if (typeof value === 'bigint') return Number(value); // see IntegerSchema
    if (typeof value !== 'number' || !Number.isFinite(value)) throw typeError(ctx, 'a number', value);
    return value;
  }
  jsonSchema(): JsonSchema {
    return this.withDescription({ type: 'number' });
  }
}

class BooleanSchema extends Schema<boolean> {
  parse(value: unknown, ctx: Ctx): boolean {
    if (ctx.mode === 'query' && typeof value === 'string') {
      if (value === 'true') return true;
      if (value === 'false') return false;
      throw new ApiError(
        ctx.code,
        `Invalid value in parameter \`${ctx.path}\`: could not parse \`${value}\` as a boolean, expected either \`true\` or \`false\``,
      );
    }
    if (typeof value !== 'boolean') throw typeError(ctx, 'a boolean', value);
    return value;
  }
  jsonSchema(): JsonSchema {
    return this.withDescription({ type: 'boolean' });
  }
}

class ArraySchema<T> extends Schema<T[]> {
  constructor(private readonly item: Schema<T>) {
    super();
  }
  parse(value: unknown, ctx: Ctx): T[] {
    if (ctx.mode === 'query' && typeof value === 'string') {
      // Query strings carry lists comma-separated.
      const parts = value === '' ? [] : value.split(',').map((p) => p.trim());
      return parts.map((p) => this.item.parse(p, ctx));
    }
    if (!Array.isArray(value)) throw typeError(ctx, 'an array', value);
    return value.map((v, i) => this.item.parse(v, { ...ctx, path: `${ctx.path}[${i}]` }));
  }
  jsonSchema(): JsonSchema {
    return this.withDescription({ type: 'array', items: this.item.jsonSchema() });
  }
}

/** An object of any keys whose values all follow one schema (webhook headers, network remotes). */
class RecordSchema<T> extends Schema<Record<string, T>> {
  constructor(private readonly value: Schema<T>) {
    super();
  }
  parse(value: unknown, ctx: Ctx): Record<string, T> {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw typeError(ctx, 'an object', value);
    const out: Record<string, T> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = this.value.parse(v, { ...ctx, path: `${ctx.path}.${k}` });
    return out;
  }
  jsonSchema(): JsonSchema {
    return this.withDescription({ type: 'object', additionalProperties: this.value.jsonSchema() });
  }
}

class AnySchema extends Schema<unknown> {
  constructor(private readonly js: JsonSchema = {}) {
    super();
  }
  parse(value: unknown): unknown {
    return value;
  }
  jsonSchema(): JsonSchema {
    return this.withDescription(this.js);
  }
}

class CustomSchema<T> extends Schema<T> {
  constructor(private readonly fn: (value: unknown, ctx: Ctx) => T, private readonly js: JsonSchema) {
    super();
  }
  parse(value: unknown, ctx: Ctx): T {
    return this.fn(value, ctx);
  }
  jsonSchema(): JsonSchema {
    return this.withDescription(this.js);
  }
}

export interface FieldDef<T = unknown> {
  schema: Schema<T>;
  code: ErrorCode;
  required?: boolean;
  /** Error code when the field is missing (defaults to `code`). */
  missingCode?: ErrorCode;
}

export type FieldsOf<F extends Record<string, FieldDef>> = {
  [K in keyof F]: F[K] extends FieldDef<infer T> ? (F[K]['required'] extends true ? T : T | undefined) : never;
};

export class ObjectSchema<F extends Record<string, FieldDef>> extends Schema<FieldsOf<F>> {
  constructor(
    readonly fields: F,
    /** `unknownCode`: the code an unknown field gets (a nested object whose errors all carry its own code). */
    private readonly opts: { allowUnknown?: boolean; unknownCode?: ErrorCode } = {},
  ) {
    super();
  }

  parse(value: unknown, ctx: Ctx): FieldsOf<F> {
    if (ctx.mode === 'json' && (typeof value !== 'object' || value === null || Array.isArray(value))) {
      throw typeError(ctx, 'an object', value);
    }
    const obj = value as Record<string, unknown>;
    const names = Object.keys(this.fields);
    if (!this.opts.allowUnknown) {
      for (const k of Object.keys(obj)) {
        if (!Object.prototype.hasOwnProperty.call(this.fields, k)) {
          const list = names.map((n) => `\`${n}\``).join(', ');
          const what = ctx.mode === 'query' ? 'parameter' : 'field';
          const at = ctx.mode === 'json' && ctx.path ? ` inside \`${ctx.path}\`` : '';
          throw new ApiError(this.opts.unknownCode ?? 'bad_request', `Unknown ${what} \`${k}\`${at}: expected one of ${list}`);
        }
      }
    }
    const out: Record<string, unknown> = {};
    for (const name of names) {
      const def = this.fields[name]!;
      const has = Object.prototype.hasOwnProperty.call(obj, name) && obj[name] !== undefined;
      if (!has) {
        if (def.required) {
          const where = ctx.mode === 'query' ? 'parameter' : 'field';
          const inside = ctx.mode === 'json' && ctx.path ? ` inside \`${ctx.path}\`` : '';
          throw new ApiError(def.missingCode ?? def.code, `Missing ${where} \`${name}\`${inside}`);
        }
        continue;
      }
      const childPath = ctx.mode === 'query' ? name : `${ctx.path}.${name}`;
      out[name] = def.schema.parse(obj[name], { path: childPath, code: def.code, mode: ctx.mode });
    }
    return out as FieldsOf<F>;
  }

  jsonSchema(): JsonSchema {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const [name, def] of Object.entries(this.fields)) {
      properties[name] = def.schema.jsonSchema();
      if (def.required) required.push(name);
    }
    const js: JsonSchema = { type: 'object', properties, additionalProperties: !!this.opts.allowUnknown };
    if (required.length) js['required'] = required;
    return this.withDescription(js);
  }

  /** Validates a whole body or query object, reporting errors at the root. */
  validate(value: unknown, mode: Mode, rootCode: ErrorCode = 'bad_request'): FieldsOf<F> {
    return this.parse(value, { path: '', code: rootCode, mode });
  }
}

/**
 * A check run before a body's schema: fields that exist on the resource but cannot be changed
 * get their own code and say which can (the reference reports them before unknown fields).
 */
export function refuseImmutable(codes: Record<string, ErrorCode>, changeable: readonly string[]): (body: unknown) => void {
  const list = changeable.map((f) => `\`${f}\``).join(', ');
  return (body) => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return;
    for (const k of Object.keys(body)) {
      const code = codes[k];
      if (code) throw new ApiError(code, `Immutable field \`${k}\`: expected one of ${list}`);
    }
  };
}

export const s = {
  string: (check?: (v: string, ctx: Ctx) => void, extra?: JsonSchema) => new StringSchema(check, extra),
  enum: <T extends string>(values: readonly T[]) => new EnumSchema(values),
  integer: (opts: { min?: number; max?: number } = {}) => new IntegerSchema(opts.min, opts.max),
  uint: (max?: number) => new IntegerSchema(0, max),
  number: () => new NumberSchema(),
  boolean: () => new BooleanSchema(),
  array: <T>(item: Schema<T>) => new ArraySchema(item),
  record: <T>(value: Schema<T>) => new RecordSchema(value),
  any: (js?: JsonSchema) => new AnySchema(js),
  custom: <T>(fn: (value: unknown, ctx: Ctx) => T, js: JsonSchema) => new CustomSchema(fn, js),
  object: <F extends Record<string, FieldDef>>(fields: F, opts?: { allowUnknown?: boolean; unknownCode?: ErrorCode }) =>
    new ObjectSchema(fields, opts),
  field: <T>(schema: Schema<T>, code: ErrorCode, extra: Omit<FieldDef<T>, 'schema' | 'code'> = {}): FieldDef<T> => ({
    schema,
    code,
    ...extra,
  }),
  required: <T>(schema: Schema<T>, code: ErrorCode, missingCode?: ErrorCode) =>
    ({ schema, code, required: true as const, ...(missingCode ? { missingCode } : {}) }) as FieldDef<T> & {
      required: true;
    },
};
