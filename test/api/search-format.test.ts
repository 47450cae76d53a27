import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { dataset } from '../fixtures/index.js';

const nested = dataset<Record<string, any>>('nested');

let t: TestNode;

const articles = [
  {
    id: 1,
    title: 'Rust and TypeScript',
    body: 'Natalie risk her future to build a world with the boy she loves. Emily Henry: The Love That Split The World.',
    tags: ['world', 'novel'],
    stars: 852,
  },
  { id: 2, title: 'Café culture', body: 'Un café à Paris, déjà vu.', tags: [], stars: 3 },
];

beforeAll(async () => {
  t = await startTestNode();
  await t.client.index('articles').addDocuments(articles).waitTask();
  await t.client.index('nested').addDocuments(nested).waitTask();
});
afterAll(async () => {
  await t.close();
});

describe('highlighting', () => {
  it('wraps matches in the tags, in arrays too, and turns numbers into strings', async () => {
    const r = await t.client.index('articles').search('world 852', { attributesToHighlight: ['*'], matchingStrategy: 'last' });
    const f = r.hits[0]!['_formatted'] as Record<string, unknown>;
    expect(f['title']).toBe('Rust and TypeScript');
    expect(f['body']).toContain('build a <em>world</em> with');
    expect(f['tags']).toEqual(['<em>world</em>', 'novel']);
    expect(f['stars']).toBe('<em>852</em>');
    expect(f['id']).toBe('1');
  });

  it('uses custom tags, or none when they are empty', async () => {
    const r = await t.client.index('articles').search('cafe', {
      attributesToHighlight: ['title'],
      highlightPreTag: '[',
      highlightPostTag: ']',
    });
    expect((r.hits[0]!['_formatted'] as Record<string, unknown>)['title']).toBe('[Café] culture');
    const none = await t.client.index('articles').search('cafe', { attributesToHighlight: ['title'], highlightPreTag: '', highlightPostTag: '' });
    expect((none.hits[0]!['_formatted'] as Record<string, unknown>)['title']).toBe('Café culture');
  });

  it('highlights nested objects and keeps _formatted to the retrieved attributes', async () => {
    const r = await t.client.index('nested').search('bobby', { attributesToHighlight: ['doggos'], attributesToRetrieve: ['id'] });
    expect(r.hits[0]).toEqual({
      id: 852,
      _formatted: {
        id: '852',
        doggos: [{ name: '<em>bobby</em>', age: '2' }, { name: 'buddy', age: '4' }],
      },
    });
  });

  it('does not add _formatted when nothing is highlighted or cropped', async () => {
    const r = await t.client.index('articles').search('cafe');
    expect(r.hits[0]).not.toHaveProperty('_formatted');
  });
});

describe('hidden attributes', () => {
  // The reference's own cases (displayed attributes too few for the other settings).
  it('never show in _formatted, and asking for them alone gives no _formatted', async () => {
    const idx = t.client.index('nested-hidden');
    await idx.updateSettings({ displayedAttributes: ['id'] }).waitTask();
    await idx.addDocuments(nested).waitTask();
    const first = async (params: Record<string, unknown>) => (await idx.search('', params)).hits[0];
    expect(await first({ attributesToRetrieve: ['father', 'id'], attributesToHighlight: ['mother'], attributesToCrop: ['cattos'] })).toEqual({ id: 852 });
    expect(await first({ attributesToHighlight: ['id'] })).toEqual({ id: 852, _formatted: { id: '852' } });
    expect(await first({ attributesToHighlight: ['id'], attributesToCrop: ['id'] })).toEqual({ id: 852, _formatted: { id: '852' } });
    expect(await first({ attributesToHighlight: ['cattos'] })).toEqual({ id: 852 });
    expect(await first({ attributesToCrop: ['cattos'] })).toEqual({ id: 852 });
    expect(await first({ attributesToRetrieve: ['cattos'], attributesToHighlight: ['cattos'], attributesToCrop: ['cattos'] })).toEqual({});
    expect(await first({ attributesToRetrieve: ['cattos'], attributesToHighlight: ['id'] })).toEqual({ _formatted: { id: '852' } });
    expect(await first({ attributesToHighlight: ['*'] })).toEqual({ id: 852, _formatted: { id: '852' } });
    // Matching words in a hidden field are not highlighted anywhere either.
    const r = await idx.search('bobby', { attributesToHighlight: ['*', 'doggos'], showMatchesPosition: true });
    expect(r.hits[0]).toEqual({ id: 852, _formatted: { id: '852' }, _matchesPosition: {} });
  });
});

describe('cropping', () => {
  it('crops around the best matches with the default length and marker', async () => {
    const r = await t.client.index('articles').search('split the world', { attributesToCrop: ['body'] });
    expect((r.hits[0]!['_formatted'] as Record<string, unknown>)['body']).toBe('…she loves. Emily Henry: The Love That Split The World.');
  });

  it('honours attr:N, cropLength and cropMarker', async () => {
    const r = await t.client.index('articles').search('future', { attributesToCrop: ['body:4'], cropLength: 20, cropMarker: '[…]' });
    expect((r.hits[0]!['_formatted'] as Record<string, unknown>)['body']).toBe('[…]risk her future to[…]');
    const whole = await t.client.index('articles').search('future', { attributesToCrop: ['body'], cropLength: 100 });
    expect((whole.hits[0]!['_formatted'] as Record<string, unknown>)['body']).toBe(articles[0]!.body);
  });

  it('starts at the first word when nothing matches, and combines with highlighting', async () => {
    const r = await t.client.index('articles').search('rust', { attributesToCrop: ['body:3'], attributesToHighlight: ['title'] });
    const f = r.hits[0]!['_formatted'] as Record<string, unknown>;
    expect(f['body']).toBe('Natalie risk her…');
    expect(f['title']).toBe('<em>Rust</em> and TypeScript');
  });
});

describe('match positions', () => {
  it('reports byte offsets and lengths, for every displayed attribute', async () => {
    const r = await t.client.index('articles').search('deja vu', { showMatchesPosition: true });
    const m = r.hits[0]!['_matchesPosition'] as Record<string, { start: number; length: number }[]>;
    const body = articles[1]!.body;
    const start = Buffer.byteLength(body.slice(0, body.indexOf('déjà')));
    expect(m['body']).toEqual([
      { start, length: Buffer.byteLength('déjà') },
      { start: start + Buffer.byteLength('déjà '), length: 2 },
    ]);
  });

  it('reports array elements with their indices', async () => {
    const r = await t.client.index('articles').search('novel', { showMatchesPosition: true });
    expect(r.hits[0]!['_matchesPosition']).toEqual({ tags: [{ start: 0, length: 5, indices: [1] }] });
  });
});

describe('restart', () => {
  it('keeps answering the same after the node restarts', async () => {
    const before = await t.client.index('articles').search('world', { showRankingScore: true });
    const dir = t.dir;
    await t.close({ keepData: true });
    t = await startTestNode([], dir);
    const after = await t.client.index('articles').search('world', { showRankingScore: true });
    expect(after.hits).toEqual(before.hits);
    await t.client.index('articles').addDocuments([{ id: 3, title: 'Another world' }]).waitTask();
    expect((await t.client.index('articles').search('another')).hits.map((h) => h['id'])).toEqual([3]);
  });
});

describe('dictionary words', () => {
  // The reference's own case: dictionary entries with dots and spaces, and synonyms between them.
  it('are highlighted as a whole, through synonyms too', async () => {
    const idx = t.client.index('dictionary');
    await idx.addDocuments([
      { id: 1, content: 'J.R.R. Tolkien' },
      { id: 2, content: 'J. R. R. Tolkien' },
      { id: 3, content: 'jrr Tolkien' },
      { id: 4, content: 'J.K. Rowlings' },
      { id: 5, content: 'J. K. Rowlings' },
      { id: 6, content: 'jk Rowlings' },
    ]).waitTask();
    await idx.updateSettings({
      dictionary: ['J.R.R.', 'J. R. R.'],
      synonyms: {
        'J.R.R.': ['jrr', 'J. R. R.'],
        'J. R. R.': ['jrr', 'J.R.R.'],
        jrr: ['J.R.R.', 'J. R. R.'],
        'J.K.': ['jk', 'J. K.'],
        'J. K.': ['jk', 'J.K.'],
        jk: ['J.K.', 'J. K.'],
      },
    }).waitTask();
    const found = async (q: string) => (await idx.search(q, { attributesToHighlight: ['content'] })).hits.map((h) => [h['id'], (h['_formatted'] as Record<string, string>)['content']]);
    expect(await found('J.R.R.')).toEqual([[1, '<em>J.R.R.</em> Tolkien'], [2, '<em>J. R. R.</em> Tolkien'], [3, '<em>jrr</em> Tolkien']]);
    expect(await found('jrr')).toEqual([[3, '<em>jrr</em> Tolkien'], [1, '<em>J.R.R.</em> Tolkien'], [2, '<em>J. R. R.</em> Tolkien']]);
    expect(await found('J. R. R.')).toEqual([[2, '<em>J. R. R.</em> Tolkien'], [1, '<em>J.R.R.</em> Tolkien'], [3, '<em>jrr</em> Tolkien']]);
    await idx.updateSettings({ dictionary: ['J.R.R.', 'J. R. R.', 'J.K.', 'J. K.'] }).waitTask();
    expect(await found('jk')).toEqual([[6, '<em>jk</em> Rowlings'], [4, '<em>J.K.</em> Rowlings'], [5, '<em>J. K.</em> Rowlings']]);
    expect(await found('J.K.')).toEqual([[4, '<em>J.K.</em> Rowlings'], [5, '<em>J. K.</em> Rowlings'], [6, '<em>jk</em> Rowlings']]);
    expect(await found('J. K.')).toEqual([[5, '<em>J. K.</em> Rowlings'], [4, '<em>J.K.</em> Rowlings'], [6, '<em>jk</em> Rowlings'], [2, '<em>J. R.</em> R. Tolkien']]);
  });
});
