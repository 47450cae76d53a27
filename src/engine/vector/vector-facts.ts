// What `_vectors` filters read of an index: its configured embedders, their indexing
// fragments, and per embedder which documents hold embeddings and where they came from,
// with the reference's meaning for each kind of filter.

import type { VectorFacts, VectorKind } from '../filter/vector-filter.js';
import type { IndexHandle } from '../indexes/index-handle.js';
import type { DocEntry } from './embedder-state.js';
import { vectorPartOf } from './semantic-search.js';

function matches(e: DocEntry, kind: VectorKind, hasFragments: boolean): boolean {
  const embedded = e.slots.length > 0;
  switch (kind.k) {
    case 'all':
      return embedded;
    case 'userProvided':
      return e.userProvided;
    // Embeddings made from the document template: none when the embedder uses fragments.
    case 'documentTemplate':
      return embedded && !e.userProvided && !hasFragments;
    case 'regenerate':
      return embedded && e.regenerate && !e.userProvided;
    case 'fragment':
      return embedded && !e.userProvided && !!e.fragments?.some(([name]) => name === kind.name);
  }
}

export function vectorFactsOf(h: IndexHandle): VectorFacts {
  const embedders = () => h.meta.settings.embedders;
  const fragmentNames = (name: string): string[] => {
    const c = embedders()[name] as Record<string, unknown> | undefined;
    const own = c?.['indexingFragments'] ?? (c?.['indexingEmbedder'] as Record<string, unknown> | undefined)?.['indexingFragments'];
    return own && typeof own === 'object' ? Object.keys(own) : [];
  };
  return {
    embedders: () => Object.keys(embedders()),
    fragments: fragmentNames,
    *docids(name, kind) {
      const state = vectorPartOf(h)?.embedders.get(name);
      if (!state) return;
      const hasFragments = fragmentNames(name).length > 0;
      for (const [docid, e] of state.docs) if (matches(e, kind, hasFragments)) yield docid;
    },
  };
}
