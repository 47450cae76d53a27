// Field ids, searchable weights and per-field locales.
//
// Documents are flattened into dot paths ("author.name"); each distinct path gets
// a field id in order of first appearance, which is deterministic because every
// node applies the same batches in the same order. Weights follow
// `searchableAttributes`: with `["*"]` every field weighs 0 (the attribute rank
// then does not discriminate), otherwise a field weighs the index of the first
// listed attribute that is it or one of its parents.

import type { IndexSettings } from '../settings/settings.js';

/** Positions are stored in 16 bits next to the field id. */
export const MAX_FIELDS = 0xffff;

/** A bigint is an integer a double cannot hold exactly (see exact-json.ts). */
export type Leaf = string | number | bigint | boolean;

/** Calls `emit(path, value)` for every primitive leaf; arrays are transparent. */
export function forEachLeaf(doc: Record<string, unknown>, emit: (path: string, value: Leaf) => void): void {
  const walk = (value: unknown, path: string): void => {
    if (value === null || value === undefined) return;
    if (Array.isArray(value)) {
      for (const v of value) walk(v, path);
      return;
    }
    switch (typeof value) {
      case 'object':
        for (const [k, v] of Object.entries(value as Record<string, unknown>)) walk(v, path === '' ? k : `${path}.${k}`);
        return;
      case 'string':
      case 'number':
      case 'bigint':
      case 'boolean':
        emit(path, value);
        return;
      default:
        return;
    }
  };
  for (const [k, v] of Object.entries(doc)) {
    // Embeddings are numbers by the hundred and never searchable: keep them out of the words.
    if (k === '_vectors') continue;
    walk(v, k);
  }
}

/** `*` at the start or the end of a pattern is a wildcard; a bare `*` matches everything. */
export function matchesPattern(pattern: string, path: string): boolean {
  if (pattern === '*') return true;
  const starts = pattern.startsWith('*');
  const ends = pattern.endsWith('*') && pattern.length > 1;
  if (starts && ends) return path.includes(pattern.slice(1, -1));
  if (starts) return path.endsWith(pattern.slice(1));
  if (ends) return path.startsWith(pattern.slice(0, -1));
  return pattern === path;
}

/** True when `path` is `attr` itself or lies below it. */
export function isPathOrChild(attr: string, path: string): boolean {
  return path === attr || (path.length > attr.length && path.startsWith(attr) && path.charCodeAt(attr.length) === 46);
}

/** Field names ↔ ids, shared by every state of an index (ids are never reused). */
export class FieldNames {
  readonly names: string[] = [];
  private readonly ids = new Map<string, number>();

  constructor(names: readonly string[] = []) {
    for (const n of names) this.add(n);
  }

  get size(): number {
    return this.names.length;
  }

  id(name: string): number | undefined {
    return this.ids.get(name);
  }

  add(name: string): number {
    let id = this.ids.get(name);
    if (id === undefined) {
      if (this.names.length >= MAX_FIELDS) throw new Error('too many distinct fields in one index');
      id = this.names.length;
      this.names.push(name);
      this.ids.set(name, id);
    }
    return id;
  }
}

/**
 * What the settings say about each field: searchable or not, its weight, whether typos
 * are allowed in it and which locales its text is in. Computed lazily per field id.
 */
export class FieldRules {
  /** -1: not searchable; otherwise the attribute weight. */
  private readonly weights: number[] = [];
  private readonly exact: boolean[] = [];
  private readonly locales: (string[] | null)[] = [];
  readonly wildcard: boolean;
  /** Highest weight a searchable field can have (0 with the wildcard). */
  readonly maxWeight: number;

  constructor(
    readonly names: FieldNames,
    private readonly settings: IndexSettings,
  ) {
    const list = settings.searchableAttributes;
    this.wildcard = list.includes('*');
    this.maxWeight = this.wildcard ? 0 : Math.max(0, list.length - 1);
  }

  private compute(fid: number): void {
    const path = this.names.names[fid];
    // A field id no document has yet (tables are sized for at least one field): not searchable.
    if (path === undefined) {
      this.weights[fid] = -1;
      this.exact[fid] = false;
      this.locales[fid] = null;
      return;
    }
    let weight = -1;
    if (this.wildcard) weight = 0;
    else {
      const list = this.settings.searchableAttributes;
      for (let i = 0; i < list.length; i++) {
        if (isPathOrChild(list[i]!, path)) {
          weight = i;
          break;
        }
      }
    }
    this.weights[fid] = weight;
    this.exact[fid] = this.settings.typoTolerance.disableOnAttributes.some((a) => isPathOrChild(a, path));
    let locales: string[] | null = null;
    for (const rule of this.settings.localizedAttributes ?? []) {
      if (rule.attributePatterns.some((p) => matchesPattern(p, path))) {
        locales = rule.locales.length > 0 ? rule.locales : null;
        break;
      }
    }
    this.locales[fid] = locales;
  }

  weight(fid: number): number {
    if (this.weights[fid] === undefined) this.compute(fid);
    return this.weights[fid]!;
  }

  isSearchable(fid: number): boolean {
    return this.weight(fid) >= 0;
  }

  /** Typo tolerance is disabled on this field (`disableOnAttributes`). */
  isExact(fid: number): boolean {
    if (this.exact[fid] === undefined) this.compute(fid);
    return this.exact[fid]!;
  }

  localesOf(fid: number): string[] | null {
    if (this.locales[fid] === undefined) this.compute(fid);
    return this.locales[fid]!;
  }

  /** Weights of every known field as a table (-1 for non-searchable ones). */
  weightTable(): Int32Array {
    // At least one slot, none searchable until a document names a field.
    const out = new Int32Array(Math.max(1, this.names.size)).fill(-1);
    for (let f = 0; f < this.names.size; f++) out[f] = this.weight(f);
    return out;
  }

  /** Names of the searchable fields, in weight order then id order. */
  searchableNames(): string[] {
    const out: { name: string; w: number; f: number }[] = [];
    for (let f = 0; f < this.names.size; f++) {
      const w = this.weight(f);
      if (w >= 0) out.push({ name: this.names.names[f]!, w, f });
    }
    return out.sort((a, b) => a.w - b.w || a.f - b.f).map((x) => x.name);
  }
}
