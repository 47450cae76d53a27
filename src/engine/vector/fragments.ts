// Fragments of a multimodal `rest` embedder: JSON values whose strings are Liquid templates.
// Indexing fragments read `doc`, search fragments read `q` and `media`. A fragment that
// names a variable the context lacks does not render (strict variables), as in the
// reference: a document gets one embedding per fragment that renders, and a search uses
// the first search fragment that renders.

import { Liquid, type Template } from 'liquidjs';
import type { Doc } from '../documents/primary-key.js';
import { documentContext } from './document-template.js';
import { EmbedError } from './embed-error.js';

const liquid = new Liquid({ strictVariables: true });

/** A JSON value with its strings compiled. */
type Compiled = { t: Template[] } | { a: Compiled[] } | { o: [string, Compiled][] } | { v: unknown };

function compile(v: unknown): Compiled {
  if (typeof v === 'string') return { t: liquid.parse(v) };
  if (Array.isArray(v)) return { a: v.map(compile) };
  if (v !== null && typeof v === 'object') return { o: Object.entries(v).map(([k, x]) => [k, compile(x)]) };
  return { v };
}

/** Thrown while rendering when the context lacks a variable the fragment reads. */
class Unrendered extends Error {}

function render(c: Compiled, ctx: object): unknown {
  if ('t' in c) {
    try {
      return liquid.renderSync(c.t, ctx) as string;
    } catch (e) {
      if (e instanceof Error && /undefined variable/.test(e.message)) throw new Unrendered();
      throw e;
    }
  }
  if ('a' in c) return c.a.map((x) => render(x, ctx));
  if ('o' in c) return Object.fromEntries(c.o.map(([k, x]) => [k, render(x, ctx)]));
  return c.v;
}

export class Fragment {
  private readonly compiled: Compiled;

  constructor(
    readonly name: string,
    readonly value: unknown,
  ) {
    try {
      this.compiled = compile(value);
    } catch (e) {
      throw new EmbedError('user', `in fragment \`${name}\`: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** The rendered value, or null when the context lacks what it reads or it renders to an empty text. */
  render(ctx: object): unknown {
    let out: unknown;
    try {
      out = render(this.compiled, ctx);
    } catch (e) {
      if (e instanceof Unrendered) return null;
      throw e;
    }
    return out === '' ? null : out;
  }
}

export interface Fragments {
  /** In the order of the stored setting (by name), which is the order of a document's embeddings. */
  indexing: Fragment[];
  search: Fragment[];
}

function list(v: unknown): Fragment[] {
  if (v === null || typeof v !== 'object') return [];
  return Object.entries(v as Record<string, { value: unknown } | null>)
    .filter(([, f]) => f !== null && f !== undefined)
    .map(([name, f]) => new Fragment(name, f!.value));
}

/** The fragments of an embedder setting, or null for an embedder that has none. */
export function fragmentsOf(c: Record<string, unknown>): Fragments | null {
  const indexing = list(c['indexingFragments']);
  const search = list(c['searchFragments']);
  return indexing.length === 0 && search.length === 0 ? null : { indexing, search };
}

/** What a document's indexing fragments render to, by fragment name (those that render only). */
export function renderIndexing(f: Fragments, doc: Doc): { name: string; value: unknown }[] {
  const ctx = { doc: documentContext(doc) };
  const out: { name: string; value: unknown }[] = [];
  for (const frag of f.indexing) {
    const value = frag.render(ctx);
    if (value !== null) out.push({ name: frag.name, value });
  }
  return out;
}

export interface SearchInput {
  q: string | null;
  media: Record<string, unknown> | null;
}

/** The value the first search fragment that renders gives for a query; an EmbedError when none does. */
export function renderSearch(f: Fragments, input: SearchInput): unknown {
  const ctx: Record<string, unknown> = {};
  if (input.q !== null) ctx['q'] = input.q;
  if (input.media !== null) ctx['media'] = input.media;
  for (const frag of f.search) {
    const value = frag.render(ctx);
    if (value !== null) return value;
  }
  throw new EmbedError('user', `Query matches no search fragment.\n  - Note: ${JSON.stringify({ q: input.q, media: input.media })}`);
}

/** The text a rendered fragment travels as through the embedding exchange, and back. */
export const fragmentText = (value: unknown): string => JSON.stringify(value);
export const fragmentValue = (text: string): unknown => JSON.parse(text) as unknown;
