// Synonyms as the query side uses them: keys and alternatives normalized with the
// index's own tokenizer, so "New York" in the settings matches the query "new york".

import type { IndexSettings } from '../settings/settings.js';
import type { Tokenizer } from '../tokenizer/index.js';

/** Normalized key (words joined by a space) → alternatives, each a list of words. */
export type Synonyms = ReadonlyMap<string, readonly (readonly string[])[]>;

/** The words of a synonym string, normalized like query words. */
export function synonymWords(tokenizer: Tokenizer, text: string): string[] {
  const out: string[] = [];
  for (const t of tokenizer.tokenize(text)) if (t.kind !== 'separator') out.push(t.lemma);
  return out;
}

export function buildSynonyms(settings: IndexSettings, tokenizer: Tokenizer): Synonyms {
  const out = new Map<string, string[][]>();
  for (const [key, alternatives] of Object.entries(settings.synonyms ?? {})) {
    const k = synonymWords(tokenizer, key);
    if (k.length === 0) continue;
    const joined = k.join(' ');
    const list = out.get(joined) ?? [];
    for (const alt of alternatives) {
      const words = synonymWords(tokenizer, alt);
      if (words.length === 0 || words.join(' ') === joined) continue;
      if (!list.some((l) => l.join(' ') === words.join(' '))) list.push(words);
    }
    if (list.length > 0) out.set(joined, list);
  }
  return out;
}
