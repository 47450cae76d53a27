import { describe, expect, it } from 'vitest';
import { globalScore, type Rank } from '../../src/engine/ranking/rank.js';
import { mergeFederated, weightedValues, type FederatedQueryHits } from '../../src/engine/search/federation.js';
import type { RankedHit, ScoreValue } from '../../src/engine/search/rank-query.js';

// Federated merging as a table: each query's hits (already ranked) with the ranks or sort
// values their rules gave, and the merged order the federation must answer.

type Value = Rank | { asc: boolean; v: unknown };

function hit(id: string, values: Value[]): { doc: { id: string }; ranked: RankedHit } {
  const score: ScoreValue[] = values.map((x) => ('rank' in x ? { rank: x } : { sort: { ascending: x.asc, value: x.v } }));
  const ranks = values.filter((x): x is Rank => 'rank' in x);
  return { doc: { id }, ranked: { docid: 0, score: globalScore(ranks), details: {}, values: score } };
}

function query(i: number, hits: ReturnType<typeof hit>[], weight = 1): FederatedQueryHits {
  return { indexUid: `i${i}`, queryIndex: i, weight, hits: hits.map((h) => h.doc), ranked: hits.map((h) => h.ranked) };
}

const r = (rank: number, max: number): Rank => ({ rank, max });
const order = (queries: FederatedQueryHits[]) => mergeFederated(queries).map((m) => m.hit['id']);

describe('federated merge', () => {
  const cases: [string, FederatedQueryHits[], string[]][] = [
    ['better scores first across queries', [query(0, [hit('a1', [r(2, 3)]), hit('a2', [r(1, 3)])]), query(1, [hit('b1', [r(3, 3)]), hit('b2', [r(1, 3)])])], ['b1', 'a1', 'a2', 'b2']],
    ['ties go to the earlier query', [query(0, [hit('a1', [r(2, 3)])]), query(1, [hit('b1', [r(2, 3)])])], ['a1', 'b1']],
    ['a weight scales a query', [query(0, [hit('a1', [r(3, 3)])]), query(1, [hit('b1', [r(2, 3)])], 2)], ['b1', 'a1']],
    ['adjacent rules compare as one score', [query(0, [hit('a1', [r(3, 3), r(1, 2)])]), query(1, [hit('b1', [r(2, 3), r(2, 2)])])], ['a1', 'b1']],
    [
      'sort values compare by value when both sort the same way',
      [query(0, [hit('a1', [{ asc: true, v: 10 }, r(3, 3)])]), query(1, [hit('b1', [{ asc: true, v: 2 }, r(1, 3)])])],
      ['b1', 'a1'],
    ],
    [
      'descending sorts put greater values first',
      [query(0, [hit('a1', [{ asc: false, v: 'apple' }])]), query(1, [hit('b1', [{ asc: false, v: 'Banana' }])])],
      ['b1', 'a1'],
    ],
    [
      'sorts in opposite directions fall back to the weighted score',
      [query(0, [hit('a1', [{ asc: true, v: 1 }, r(1, 3)])]), query(1, [hit('b1', [{ asc: false, v: 1 }, r(3, 3)])])],
      ['b1', 'a1'],
    ],
    ['each query keeps its own order', [query(0, [hit('a1', [r(1, 3)]), hit('a2', [r(3, 3)])]), query(1, [hit('b1', [r(2, 3)])])], ['b1', 'a1', 'a2']],
    ['no queries, no hits', [], []],
  ];
  for (const [name, queries, expected] of cases) {
    it(name, () => {
      expect(order(queries)).toEqual(expected);
    });
  }

  it('reports where each hit comes from and its weighted score', () => {
    const merged = mergeFederated([query(0, [hit('a', [r(1, 2)])], 0.5), query(3, [hit('b', [r(2, 2)])])]);
    expect(merged.map((m) => [m.hit['id'], m.indexUid, m.queryIndex, m.weightedScore])).toEqual([
      ['b', 'i3', 3, 1],
      ['a', 'i0', 0, 0.25],
    ]);
  });

  it('merges adjacent ranks and keeps sort values apart', () => {
    expect(weightedValues([{ rank: r(2, 3) }, { rank: r(1, 2) }, { sort: { ascending: true, value: 5 } }, { rank: r(1, 1) }], 2)).toEqual([
      { score: 2 * (3 / 6) },
      { sort: { ascending: true, value: 5 } },
      { score: 2 },
    ]);
  });
});
