// The text an embedder receives for a document: the embedder's Liquid `documentTemplate`
// rendered over the document, then cut to `documentTemplateMaxBytes` on a character
// boundary. A document whose text did not change keeps its embedding.

import { createHash } from 'node:crypto';
import { Liquid, type Template } from 'liquidjs';
import type { Doc } from '../documents/primary-key.js';

export const DEFAULT_TEMPLATE =
  '{% for field in fields %}{% if field.is_searchable and field.value != nil %}{{ field.name }}: {{ field.value }}\n{% endif %}{% endfor %}';
export const DEFAULT_MAX_BYTES = 400;

const liquid = new Liquid();

/**
 * An object value as the reference's template engine prints it: each key followed by its
 * value, with nothing between (plain objects would print `[object Object]`). Properties
 * stay readable (`doc.author.name`).
 */
class RenderedObject {
  constructor(entries: [string, unknown][]) {
    for (const [k, v] of entries) Object.defineProperty(this, k, { value: v, enumerable: true });
  }
  toString(): string {
    return Object.entries(this)
      .map(([k, v]) => k + stringify(v))
      .join('');
  }
}

function stringify(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) return v.map(stringify).join('');
  return String(v);
}

/**
 * An integer a double cannot hold (a bigint, see exact-json.ts) as templates see it: printed
 * with all its digits, a double in arithmetic filters, comparisons and `json` (Liquid's
 * filters cannot mix bigints and numbers, and would fail the document).
 */
class TemplateInteger {
  constructor(private readonly v: bigint) {}
  toString(): string {
    return this.v.toString();
  }
  valueOf(): number {
    return Number(this.v);
  }
  toJSON(): number {
    return Number(this.v);
  }
}

function liquidValue(v: unknown): unknown {
  if (typeof v === 'bigint') return new TemplateInteger(v);
  if (Array.isArray(v)) return v.map(liquidValue);
  if (v !== null && typeof v === 'object') {
    return new RenderedObject(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, liquidValue(x)]));
  }
  return v;
}

/** Whether a top-level field is searchable under `searchableAttributes`. */
function searchableTest(searchable: readonly string[]): (field: string) => boolean {
  if (searchable.includes('*')) return () => true;
  return (f) => searchable.some((a) => a === f || a.startsWith(f + '.') || f.startsWith(a + '.'));
}

/** Cuts `text` to at most `maxBytes` UTF-8 bytes without splitting a character. */
export function truncateUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // Continuation bytes are 10xxxxxx: step back to the start of the character cut in two.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

/** `doc` as templates see it: every field but `_vectors`, objects printed as the reference prints them. */
export function documentContext(doc: Doc): object {
  return new RenderedObject(Object.entries(doc).filter(([k]) => k !== '_vectors').map(([k, v]) => [k, liquidValue(v)]));
}

export class DocumentTemplate {
  private readonly template: Template[];

  constructor(
    readonly source: string = DEFAULT_TEMPLATE,
    readonly maxBytes: number = DEFAULT_MAX_BYTES,
  ) {
    this.template = liquid.parse(source);
  }

  /** The document's text; `_vectors` is not part of what is embedded. */
  render(doc: Doc, searchableAttributes: readonly string[]): string {
    const isSearchable = searchableTest(searchableAttributes);
    const shown: [string, unknown][] = Object.entries(doc).filter(([k]) => k !== '_vectors');
    const context = {
      doc: documentContext(doc),
      fields: shown.map(([name, value]) => ({ name, value: liquidValue(value), is_searchable: isSearchable(name) })),
    };
    return truncateUtf8(liquid.renderSync(this.template, context) as string, this.maxBytes);
  }
}

/** A short stable digest of a text: what is stored to know whether a document must be embedded again. */
export function textHash(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}
