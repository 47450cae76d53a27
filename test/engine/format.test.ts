import { beforeAll, describe, expect, it } from 'vitest';
import type { IndexState } from '../../src/engine/fulltext/index-state.js';
import { MatchingWords } from '../../src/engine/format/matching-words.js';
import { TextMatcher } from '../../src/engine/format/matcher.js';
import { buildIndex, search } from './search-helpers.js';

// The reference matcher's own test index and expectations.
const DOCS = [
  { id: 1, name: 'split this world westfali westfalia the Ŵôřlḑôle' },
  { id: 2, name: 'Westfália' },
  { id: 3, name: 'Ŵôřlḑôle' },
];

let state: IndexState;
beforeAll(async () => {
  state = await buildIndex(DOCS);
});

function matcher(q: string, text: string): TextMatcher {
  const words = new MatchingWords(search(state, q).units);
  return new TextMatcher(text, state.tokenizer, words, null);
}

const plain = { highlight: false, crop: null, preTag: '<em>', postTag: '</em>', cropMarker: '…' };
const hl = { ...plain, highlight: true };
const crop10 = { ...plain, crop: 10 };

describe('highlighting', () => {
  it('wraps every matched word and keeps the text otherwise', () => {
    const text = 'Natalie risk her future to build a world with the boy she loves. Emily Henry: The Love That Split The World.';
    expect(matcher('split the world', text).format(hl)).toBe(
      'Natalie risk her future to build a <em>world</em> with <em>the</em> boy she loves. Emily Henry: <em>The</em> Love That <em>Split</em> <em>The</em> <em>World</em>.',
    );
    expect(matcher('split the world', 'A quick brown fox').format(hl)).toBe('A quick brown fox');
    expect(matcher('split the world', ':-)').format(hl)).toBe(':-)');
  });

  it('highlights only the typed part of a prefix, accents included', () => {
    expect(matcher('world', 'Ŵôřlḑôle').format(hl)).toBe('<em>Ŵôřlḑ</em>ôle');
    expect(matcher('world', 'Ŵôřlḑ').format(hl)).toBe('<em>Ŵôřlḑ</em>');
    expect(matcher('westfali', 'Westfália').format(hl)).toBe('<em>Westfáli</em>a');
  });

  it('reports byte positions, not character positions', () => {
    expect(matcher('world', 'é Ŵôřlḑ').bounds()).toEqual([{ start: 3, length: Buffer.byteLength('Ŵôřlḑ') }]);
  });
});

describe('cropping', () => {
  const cases: [string, string][] = [
    ['A quick brown fox can not jump 32 feet, right? Brr, it is cold!', 'A quick brown fox can not jump 32 feet, right…'],
    ['(A quick brown fox can not jump 32 feet, right? Brr, it is cold!)', '(A quick brown fox can not jump 32 feet, right…'],
    ['Natalie risk her future. Split The World is a book written by Emily Henry. I never read it.', '…Split The World is a book written by Emily Henry…'],
    ['Natalie risk her future to build a world with the boy she loves.', '…future to build a world with the boy she loves…'],
    [
      'Natalie risk her future to build a world with the boy she loves. Emily Henry: The Love That Split The World.',
      '…she loves. Emily Henry: The Love That Split The World.',
    ],
    ['The world split void void void void void void void void void split the world void void', '…void void void void void split the world void void'],
    [
      'split void the void void world void void void void void void void void void void split the world void void',
      '…void void void void void split the world void void',
    ],
    [
      'split split split split split split void void void void void void void void void void split the world void void',
      '…void void void void void split the world void void',
    ],
  ];
  for (const [text, expected] of cases) {
    it(`crops "${text.slice(0, 30)}…" around the best matches`, () => {
      expect(matcher('split the world', text).format(crop10)).toBe(expected);
    });
  }

  it('leaves empty texts and separator-only texts alone', () => {
    expect(matcher('split the world', '').format(crop10)).toBe('');
    expect(matcher('split the world', ':-)').format(crop10)).toBe(':-)');
  });

  it('highlights inside the crop window with custom tags and no marker when empty', () => {
    const text = 'Natalie risk her future to build a world with the boy she loves.';
    const out = matcher('split the world', text).format({ ...crop10, highlight: true, preTag: '[', postTag: ']', cropMarker: '' });
    expect(out).toBe('future to build a [world] with [the] boy she loves');
  });
});
