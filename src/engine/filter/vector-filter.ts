// `_vectors` filters: `_vectors EXISTS` and `_vectors.<embedder>[.userProvided |
// .documentTemplate | .regenerate | .fragments.<name>] EXISTS` (and `NOT` of them), which
// select documents by the embeddings they hold rather than by a field. They need no
// filterable attribute; only `EXISTS` applies to them.

import { Bitmap } from '../facets/bitmap.js';
import { FilterError } from './errors.js';
import type { Token } from './filter-tree.js';

export type VectorKind = { k: 'all' | 'userProvided' | 'documentTemplate' | 'regenerate' } | { k: 'fragment'; name: string };

/** What an index knows of its embeddings, for these filters. */
export interface VectorFacts {
  /** Configured embedders. */
  embedders(): string[];
  /** Indexing fragments of a configured embedder. */
  fragments(embedder: string): string[];
  /** Documents of `embedder` matching `kind`. */
  docids(embedder: string, kind: VectorKind): Iterable<number>;
}

export function isVectorField(field: string): boolean {
  return field === '_vectors' || field.startsWith('_vectors.');
}

function listed(names: string[]): string {
  return [...names].sort().map((n) => `\`${n}\``).join(', ');
}

function parse(t: Token): { embedder: string | null; kind: VectorKind } {
  const [, embedder, ...rest] = t.value.split('.');
  const fail = (message: string) => new FilterError(message, t.span, t.source);
  if (embedder === undefined) return { embedder: null, kind: { k: 'all' } };
  if (embedder === '') throw fail('Vector filter is missing an embedder name after `_vectors.`.');
  const [what, name, ...extra] = rest;
  if (what === undefined) return { embedder, kind: { k: 'all' } };
  if (what === 'fragments') {
    if (!name) throw fail('Vector filter is inconsistent: either specify a fragment name or remove the `fragments` part.');
    if (extra.length > 0) throw fail(`Vector filter has an unknown part \`${extra.join('.')}\` after \`fragments.${name}\`.`);
    return { embedder, kind: { k: 'fragment', name } };
  }
  if (what === 'userProvided' || what === 'documentTemplate' || what === 'regenerate') {
    if (name !== undefined) throw fail(`Vector filter has an unknown part \`${[name, ...extra].join('.')}\` after \`${what}\`.`);
    return { embedder, kind: { k: what } };
  }
  throw fail(
    `Vector filter has an unknown part \`${rest.join('.')}\` after the embedder name.\n  - Hint: use \`.userProvided\`, \`.documentTemplate\`, \`.regenerate\` or \`.fragments.<name>\`, or nothing.`,
  );
}

/** The documents a `_vectors` condition selects; `op` other than `EXISTS` is refused. */
export function evaluateVectorFilter(t: Token, op: string, facts: VectorFacts | null, capacity: number): Bitmap {
  if (op !== 'EXISTS') {
    throw new FilterError(`Filter operator \`${op}\` is not allowed on \`${t.value}\`: vector filters only accept \`EXISTS\` and \`NOT EXISTS\`.`, t.span, t.source);
  }
  const { embedder, kind } = parse(t);
  const embedders = facts?.embedders() ?? [];
  if (embedder !== null && !embedders.includes(embedder)) {
    const available = embedders.length === 0 ? 'This index does not have any configured embedders.' : `Available embedders are: ${listed(embedders)}.`;
    throw new FilterError(`The embedder \`${embedder}\` does not exist. ${available}`, t.span, t.source);
  }
  if (embedder !== null && kind.k === 'fragment') {
    const fragments = facts!.fragments(embedder);
    if (!fragments.includes(kind.name)) {
      const available = fragments.length === 0 ? 'This embedder does not have any configured fragments.' : `Available fragments on this embedder are: ${listed(fragments)}.`;
      throw new FilterError(`The fragment \`${kind.name}\` does not exist on embedder \`${embedder}\`. ${available}`, t.span, t.source);
    }
  }
  const out = new Bitmap(capacity);
  for (const e of embedder === null ? embedders : [embedder]) for (const d of facts!.docids(e, kind)) out.add(d);
  return out;
}
