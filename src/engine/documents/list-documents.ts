// Documents as the documents routes show them: a page in docid order (or in the order of
// `sort`), restricted to some ids and to what a filter keeps, each projected on `fields`, with
// `_vectors` only when asked for.

import type { Engine } from '../engine.js';
import { engineFilterOptions } from '../search/answer-query.js';
import { sortedUnique } from '../facets/bitmap.js';
import { checkSortable, everyDocid, filterDocids, parseSort, rejoinGeoPoints, sortedDocids, sortValuesOf } from '../facets/index.js';
import type { WireScore } from '../search/federation.js';
import type { IndexHandle } from '../indexes/index-handle.js';
import { retrievedVectors } from '../vector/semantic-search.js';
import type { Doc } from './primary-key.js';
import { projectFields } from './project.js';

export interface DocumentsQuery {
  offset?: number;
  limit?: number;
  fields?: string[] | null;
  retrieveVectors?: boolean;
  ids?: string[] | null;
  filter?: unknown;
  sort?: string[] | null;
}

export interface DocumentsPage {
  results: Doc[];
  offset: number;
  limit: number;
  total: number;
  /**
   * With `withSortValues`: each result's values for the `sort` criteria, as instances exchange
   * them, so that pages from several instances merge in sort order (empty without `sort`).
   */
  sortValues?: WireScore[][];
}

/** `_vectors` stays hidden unless asked for, and then shows every embedder's embeddings; `fields` selects what is shown. */
export async function presentDocument(h: IndexHandle, doc: Doc, fields: string[] | null | undefined, retrieveVectors: boolean | undefined): Promise<Doc> {
  const out = { ...projectFields(doc, fields) };
  delete out['_vectors'];
  if (retrieveVectors) out['_vectors'] = await retrievedVectors(h, doc);
  return out;
}

export async function listDocuments(
  engine: Engine,
  uid: string,
  p: DocumentsQuery,
  opts: { containsFilter: boolean; foreignKeys?: boolean; withSortValues?: boolean },
): Promise<DocumentsPage> {
  const h = engine.getIndex(uid);
  const offset = p.offset ?? 0;
  const limit = p.limit ?? 20;
  const criteria = p.sort && p.sort.length > 0 ? parseSort(rejoinGeoPoints(p.sort), 'invalid_document_sort') : null;
  if (criteria) checkSortable(criteria, h.meta.settings, 'invalid_document_sort', false);
  // Docids ascending, each once: the page's order without `sort`.
  let docids: Uint32Array | null = p.ids ? sortedUnique(engine.docidsOf(h, p.ids)) : null;
  const matched = filterDocids(h, p.filter ?? null, { code: 'invalid_document_filter', ...engineFilterOptions(engine, opts) });
  if (matched) docids = docids ? intersection(docids, matched) : matched;
  const present = (docs: Doc[]) => Promise.all(docs.map((d) => presentDocument(h, d, p.fields, p.retrieveVectors)));
  if (criteria) {
    const order = sortedDocids(h, criteria, docids, offset + limit).slice(offset);
    const docs = await engine.readDocs(engine.store, h, order);
    const total = docids ? docids.length : h.meta.docCount;
    const kept = order.filter((_, i) => docs[i] !== null);
    const page: DocumentsPage = { results: await present(docs.filter((d): d is Doc => d !== null)), offset, limit, total };
    if (opts.withSortValues) {
      const values = sortValuesOf(h, criteria, kept);
      page.sortValues = kept.map((d) =>
        values.get(d)!.map((value, i) => {
          const c = criteria[i]!;
          return c.kind === 'geo' ? { geoSort: { asc: c.ascending, distance: value as number | null } } : { sort: { asc: c.ascending, value } };
        }),
      );
    }
    return page;
  }
  // Past the first page, the docids of every document tell which to read: a scan of the
  // store would read and skip every document before the offset.
  const every = !docids && offset > 0 ? everyDocid(h) : null;
  const { results, total } = await engine.listDocuments(uid, { offset, limit, docids: docids ?? every });
  const page: DocumentsPage = { results: await present(results), offset, limit, total: every ? h.meta.docCount : total };
  if (opts.withSortValues) page.sortValues = results.map(() => []);
  return page;
}

/** Docids in both ascending lists. */
function intersection(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(Math.min(a.length, b.length));
  let n = 0;
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (a[i]! < b[j]!) i++;
    else if (a[i]! > b[j]!) j++;
    else {
      out[n++] = a[i]!;
      i++;
      j++;
    }
  }
  return out.subarray(0, n);
}
