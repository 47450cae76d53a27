// Ranked results on long documents must not change when the search gets faster: a seeded
// corpus of long documents (WordNet glosses strung together, 30-150 words each) and a few
// hundred seeded queries of every kind whose ranked ids, total counts and scores are kept in
// test/fixtures/ranking-longdocs.golden.json. `TRINE_UPDATE_GOLDEN=1` rewrites the file; do so
// only for a change that is meant to change ranking, and say why in its commit.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Doc } from '../../src/engine/documents/primary-key.js';
import type { IndexState } from '../../src/engine/fulltext/index-state.js';
import type { SearchRequest } from '../../src/engine/search/rank-query.js';
import { misspell } from '../bench/bench-util.js';
import { loadSynsets, pick, rng } from '../bench/wordnet.js';
import { ROOT } from '../helpers/node.js';
import { buildIndex, search } from './search-helpers.js';

const GOLDEN = join(ROOT, 'test/fixtures/ranking-longdocs.golden.json');
const DENSE_GOLDEN = join(ROOT, 'test/fixtures/ranking-dense.golden.json');
const DOCS = 3000;
const PER_KIND = 80;

interface Case {
  q: string;
  opts: Partial<SearchRequest>;
}

interface Answer {
  ids: unknown[];
  total: number;
  scores: number[];
}

function corpus(): Doc[] {
  const synsets = loadSynsets().filter((s) => s.definition.length > 0);
  const r = rng(7);
  const docs: Doc[] = [];
  for (let i = 0; i < DOCS; i++) {
    const head = synsets[Math.floor(r() * synsets.length)]!;
    const parts = pick(synsets, 3 + Math.floor(r() * 12), r);
    docs.push({
      id: i,
      title: head.word,
      summary: head.definition,
      body: parts.map((p) => `${p.definition}. ${p.examples.join('. ')}`).join(' '),
      rank: Math.floor(r() * 100),
    });
  }
  return docs;
}

const words = (text: unknown): string[] => String(text).toLowerCase().match(/[a-z]+/g) ?? [];

function cases(docs: Doc[]): Case[] {
  const r = rng(11);
  const out: Case[] = [];
  const some = () => docs[Math.floor(r() * docs.length)]!;
  const word = (d: Doc, min = 3) => words(`${d['title']} ${d['body']}`).filter((w) => w.length >= min)[0] ?? 'tree';
  const bodyWords = (d: Doc, n: number) => {
    const ws = words(d['body']);
    const at = Math.floor(r() * Math.max(1, ws.length - n));
    return ws.slice(at, at + n).join(' ');
  };
  for (let i = 0; i < PER_KIND; i++) {
    out.push({ q: word(some()), opts: {} });
    const long = words(some()['body']).filter((w) => w.length >= 6);
    out.push({ q: misspell(long[Math.floor(r() * long.length)] ?? 'absolute', r), opts: {} });
    out.push({ q: i % 2 === 0 ? 'abcdefghijklmnopqrstuvwxyz'[Math.floor(r() * 26)]! : word(some(), 2).slice(0, 2), opts: {} });
    out.push({ q: bodyWords(some(), 3), opts: {} });
    // Pages past the first, other matching strategies, a sort and a cropped limit: what an
    // early stop must still answer exactly.
    out.push({ q: bodyWords(some(), 2), opts: { offset: 5 + Math.floor(r() * 20), limit: 7 } });
    out.push({ q: bodyWords(some(), 3), opts: { matchingStrategy: i % 2 === 0 ? 'all' : 'frequency' } });
    out.push({ q: word(some(), 2).slice(0, 2 + (i % 2)), opts: { sort: [{ field: 'rank', ascending: i % 2 === 0 }] } });
    out.push({ q: `${word(some())} ${word(some(), 2).slice(0, 2)}`, opts: { limit: 3 } });
    // Common words with a short last word: a prefix after other terms, in crowded buckets.
    const ws = words(some()['body']);
    const at = ws.findIndex((w, k) => k >= 2 && w.length <= 2);
    out.push({ q: at >= 2 ? ws.slice(at - 2, at + 1).join(' ') : bodyWords(some(), 3), opts: {} });
    out.push({ q: bodyWords(some(), 4), opts: {} });
    // Only common words: the largest buckets several terms have.
    const common = words(some()['body']);
    const c = common.findIndex((w, k) => k >= 2 && w.length <= 2 && common[k - 1]!.length <= 3 && common[k - 2]!.length <= 4);
    out.push({ q: c >= 2 ? common.slice(c - 2, c + 1).join(' ') : `the ${word(some())} of`, opts: {} });
  }
  return out;
}

/**
 * Documents drawn from a few dozen short words: every query of common words then has
 * buckets of hundreds to thousands of documents, where the rules read aggregates in bulk.
 */
function denseCorpus(): { docs: Doc[]; queries: Case[] } {
  const r = rng(13);
  const vocabulary = 'a an the of or in on to as at by is it be act art end one two old new red sea sun tree rock time water'.split(' ');
  const draw = () => vocabulary[Math.floor(r() * vocabulary.length)]!;
  const docs: Doc[] = [];
  for (let i = 0; i < 1500; i++) {
    docs.push({ id: i, title: `${draw()} ${draw()}`, body: Array.from({ length: 20 + Math.floor(r() * 40) }, draw).join(' '), rank: Math.floor(r() * 100) });
  }
  const queries: Case[] = [];
  for (let i = 0; i < 60; i++) {
    const n = 2 + (i % 3);
    queries.push({ q: Array.from({ length: n }, draw).join(' '), opts: i % 5 === 0 ? { matchingStrategy: 'all' } : {} });
  }
  return { docs, queries };
}

function checkGolden(file: string, got: unknown[]): void {
  if (process.env['TRINE_UPDATE_GOLDEN'] === '1' || !existsSync(file)) {
    writeFileSync(file, JSON.stringify(got, null, 0).replaceAll('},{', '},\n{') + '\n');
  }
  const want = JSON.parse(readFileSync(file, 'utf8')) as unknown[];
  expect(got.length).toBe(want.length);
  for (let i = 0; i < got.length; i++) expect(got[i], `query ${i}: ${JSON.stringify((got[i] as Case).q)}`).toEqual(want[i]);
}

function answer(state: IndexState, c: Case): Answer {
  const out = search(state, c.q, { ...c.opts, scores: true });
  return {
    ids: out.hits.map((h) => h.docid),
    total: out.candidates,
    scores: out.hits.map((h) => Math.round(h.score * 1e9) / 1e9),
  };
}

describe('ranking on long documents stays what it was', () => {
  let docs: Doc[];
  let state: IndexState;
  let all: Case[];

  beforeAll(async () => {
    docs = corpus();
    state = await buildIndex(docs, { sortableAttributes: ['rank'], searchableAttributes: ['title', 'summary', 'body'] });
    all = cases(docs);
  }, 120_000);

  it('answers every seeded query with the recorded hits, totals and scores', () => {
    const got = all.map((c) => ({ q: c.q, opts: c.opts, ...answer(state, c) }));
    checkGolden(GOLDEN, got);
    // The corpus must reach what the kinds are for: long documents, many hits per prefix.
    expect(got.filter((g) => g.total > 100).length).toBeGreaterThan(PER_KIND);
  });

  it('answers queries of common words over dense documents with the recorded hits, totals and scores', async () => {
    const { docs: dense, queries } = denseCorpus();
    const denseState = await buildIndex(dense, { sortableAttributes: ['rank'], searchableAttributes: ['title', 'body'] });
    const got = queries.map((c) => ({ q: c.q, opts: c.opts, ...answer(denseState, c) }));
    checkGolden(DENSE_GOLDEN, got);
    expect(got.filter((g) => g.total >= 256).length).toBeGreaterThan(30);
  });
});
