import { describe, expect, it } from 'vitest';
import { SortedWords, WordTable } from '../../src/engine/fulltext/word-table.js';
import { Yielder } from '../../src/util/yielder.js';
import { rng } from '../helpers/rng.js';

function words(n: number, r: () => number): string[] {
  const letters = 'abcdeéz';
  const out = new Set<string>();
  while (out.size < n) {
    const len = 1 + Math.floor(r() * 7);
    let w = '';
    for (let i = 0; i < len; i++) w += letters[Math.floor(r() * letters.length)]!;
    // A few words out of code-unit order with their first letter, as a non-BMP first character.
    out.add(r() < 0.01 ? `😀${w}` : w);
  }
  return [...out];
}

describe('the sorted dictionary built in turns', () => {
  it('merges and prepares exactly as the synchronous build does', async () => {
    const r = rng(3);
    const all = words(30_000, r);
    const base = SortedWords.build({ words: all.slice(0, 20_000) });
    const added = all.slice(20_000).map((word, i) => ({ id: 20_000 + i, word }));
    const sync = base.merge(added).prepare();
    const turns = await (await base.mergeInTurns(added, new Yielder(0))).prepareInTurns(new Yielder(0));
    expect(turns.words).toEqual(sync.words);
    expect([...turns.ids]).toEqual([...sync.ids]);
    expect(turns.firstChars).toEqual(sync.firstChars);
    for (const c of sync.firstChars) expect(turns.charRange(c)).toEqual(sync.charRange(c));
    expect([...turns.prefixLengths()]).toEqual([...sync.prefixLengths()]);
    expect(turns.codes()).toEqual(sync.codes());
    for (let i = 0; i < sync.size; i += 97) for (const len of [1, 2, 3]) expect(turns.endOfPrefix(i, len)).toBe(sync.endOfPrefix(i, len));
  });
});

describe('the word table', () => {
  it('finds words committed since its map was built, mapped in turns or on the next lookup', async () => {
    const t = new WordTable(['alpha', 'beta']);
    expect(t.id('beta')).toBe(1);
    const s = t.stage();
    expect(s.idOf('gamma')).toBe(2);
    expect(s.idOf('alpha')).toBe(0);
    t.commit(s);
    expect(t.id('gamma')).toBe(2);
    const s2 = t.stage();
    for (let i = 0; i < 40_000; i++) s2.idOf(`w${i}`);
    t.commit(s2);
    await t.mapInTurns(new Yielder(0));
    expect(t.id('w39999')).toBe(3 + 39_999);
    expect(t.stage().idOf('w5')).toBe(8);
  });

  it('shows words written ahead of a batch only once the batch commits them', async () => {
    const t = new WordTable(['alpha']);
    const dropped = t.stage();
    dropped.idOf('never');
    await t.writeAhead(dropped, new Yielder(0));
    expect(t.size).toBe(1);
    expect(t.id('never')).toBeUndefined();
    // The dropped batch's words give way to the next one's.
    const s = t.stage();
    expect(s.idOf('beta')).toBe(1);
    await t.writeAhead(s, new Yielder(0));
    expect(t.id('beta')).toBeUndefined();
    t.commit(s);
    expect([t.size, t.id('beta'), t.word(1), t.id('never')]).toEqual([2, 1, 'beta', undefined]);
  });
});

describe('the sorted dictionary merged batch after batch', () => {
  it('equals the dictionary built from every word at once, its prefix lengths and code units included', async () => {
    const r = rng(11);
    const all = words(12_000, r);
    // Words that sort first and last, and long words sharing more than the 255 code units a prefix length holds.
    const long = 'q'.repeat(300);
    all.push('\u0001first', '\uffffz', `${long}a`, `${long}b`, `${long.slice(0, 200)}c`);
    // The empty word (it sorts first), and first characters made of two code units.
    all.push('', '\ud83d\ude00smile', '\ud83d\ude01grin', '\ud83d\ude00');
    const cuts = [0, 1, 4_000, 4_001, 9_000, all.length];
    let merged = SortedWords.empty();
    for (let c = 1; c < cuts.length; c++) {
      const added = all.slice(cuts[c - 1], cuts[c]).map((word, i) => ({ id: cuts[c - 1]! + i, word }));
      merged = c % 2 === 0 ? merged.merge(added) : await merged.mergeInTurns(added, new Yielder(0));
      const whole = SortedWords.build({ words: all.slice(0, cuts[c]) }).prepare();
      expect(merged.words).toEqual(whole.words);
      expect([...merged.ids]).toEqual([...whole.ids]);
      expect([...merged.prefixLengths()]).toEqual([...whole.prefixLengths()]);
      expect(merged.codes()).toEqual(whole.codes());
      expect(merged.firstChars).toEqual(whole.firstChars);
      for (const f of whole.firstChars) expect(merged.charRange(f)).toEqual(whole.charRange(f));
      for (let i = 0; i < whole.size; i += 53) for (const len of [1, 2, 4]) expect(merged.endOfPrefix(i, len)).toBe(whole.endOfPrefix(i, len));
    }
  });

  it('finds the end of a run of words sharing a prefix as a scan of their prefix lengths does', () => {
    const r = rng(5);
    const sorted = SortedWords.build({ words: words(20_000, r) }).prepare();
    const lcp = sorted.prefixLengths();
    const scan = (i: number, len: number, hi: number) => {
      let j = i + 1;
      while (j < hi && lcp[j]! >= len) j++;
      return j;
    };
    for (let t = 0; t < 5_000; t++) {
      const i = Math.floor(r() * sorted.size);
      const x = r();
      // A bound before the word itself answers the next index, as a scan does.
      const hi = x < 0.5 ? sorted.size : x < 0.55 ? Math.max(0, i - 40) : Math.min(sorted.size, i + 1 + Math.floor(r() * 3_000));
      const len = 1 + Math.floor(r() * 3);
      expect(sorted.endOfPrefix(i, len, hi)).toBe(scan(i, len, hi));
    }
  });
});

describe('a batch stage', () => {
  it('gives every occurrence of a word the same id, known words their table id, new ones the next', () => {
    const r = rng(17);
    const pool = words(6_000, r);
    const table = new WordTable();
    const first = table.stage();
    for (const w of pool.slice(0, 3_000)) first.idOf(w);
    table.commit(first);
    const stage = table.stage();
    const expected = new Map(pool.slice(0, 3_000).map((w, i) => [w, i]));
    for (let t = 0; t < 60_000; t++) {
      // Common words often, the rest now and then: repeats and slot collisions alike.
      const i = r() < 0.7 ? Math.floor(r() * 50) : Math.floor(r() * pool.length);
      const w = pool[i]!.slice(0);
      if (!expected.has(w)) expected.set(w, expected.size);
      expect(stage.idOf(w)).toBe(expected.get(w));
    }
    expect(stage.added).toEqual([...expected.keys()].slice(3_000));
  });
});
