// What the index keeps about one document: its words with their field and position,
// the number of words of each field, and the raw values of the fields used to sort,
// deduplicate or filter. Records are persisted one key per document; the inverted
// posting lists are rebuilt from them when an index is opened.

import { MAX_DISTANCE, type Tokenizer } from '../tokenizer/index.js';
import type { Doc } from '../documents/primary-key.js';
import { forEachLeaf, type FieldNames, type FieldRules } from './field-table.js';
import type { WordStage } from './word-table.js';

/** A value kept for sorting, distinct and filters: numbers stay numbers, the rest is a string. */
export type FieldValue = number | string;

export interface DocRecord {
  /** Pairs [wordId, fp] where fp = fieldId << 16 | position, sorted by fp. */
  tokens: Uint32Array;
  /** fieldId << 16 | word count (capped at 0xffff), one per field that has words. */
  counts: Uint32Array;
  /** Leaf path → values, for the fields selected as value fields. */
  values: Record<string, FieldValue[]> | null;
}

export const MAX_POSITION = 0xffff;

/** Decides which leaf paths keep their values (sortable, distinct, filterable, custom rules). */
export type ValueFieldPredicate = (path: string) => boolean;

export interface ExtractContext {
  names: FieldNames;
  rules: FieldRules;
  tokenizer: Tokenizer;
  words: WordStage;
  keepValue: ValueFieldPredicate;
}

/** Tokenizes a document into its record. */
export function extractRecord(doc: Doc, ctx: ExtractContext): DocRecord {
  const toks: number[] = [];
  const nextBase = new Map<number, number>();
  const counts = new Map<number, number>();
  let values: Record<string, FieldValue[]> | null = null;
  let sorted = true;
  let lastFp = -1;

  forEachLeaf(doc, (path, value) => {
    const fid = ctx.names.add(path);
    if (ctx.keepValue(path)) {
      values ??= {};
      (values[path] ??= []).push(typeof value === 'boolean' ? String(value) : value);
    }
    if (!ctx.rules.isSearchable(fid)) return;
    const text = typeof value === 'string' ? value : String(value);
    const base = nextBase.get(fid) ?? 0;
    const high = fid << 16;
    let last = -1;
    let n = 0;
    const locales = ctx.rules.localesOf(fid);
    ctx.tokenizer.forEachWord(
      text,
      (lemma, pos) => {
        const p = base + pos;
        if (p > MAX_POSITION) return;
        const fp = (high | p) >>> 0;
        if (fp < lastFp) sorted = false;
        lastFp = fp;
        toks.push(ctx.words.idOf(lemma), fp);
        last = p;
        n++;
      },
      locales ? { locales } : undefined,
    );
    if (last >= 0) {
      // Successive values of one field are kept apart like sentences.
      nextBase.set(fid, last + MAX_DISTANCE);
      counts.set(fid, (counts.get(fid) ?? 0) + n);
    }
  });

  let tokens: Uint32Array = Uint32Array.from(toks);
  if (!sorted) tokens = sortPairsBySecond(tokens);
  const c = new Uint32Array(counts.size);
  let i = 0;
  for (const [fid, n] of [...counts.entries()].sort((a, b) => a[0] - b[0])) c[i++] = ((fid << 16) | Math.min(n, 0xffff)) >>> 0;
  return { tokens, counts: c, values };
}

function sortPairsBySecond(pairs: Uint32Array): Uint32Array {
  const n = pairs.length / 2;
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => pairs[2 * a + 1]! - pairs[2 * b + 1]! || a - b);
  const out = new Uint32Array(pairs.length);
  order.forEach((src, k) => {
    out[2 * k] = pairs[2 * src]!;
    out[2 * k + 1] = pairs[2 * src + 1]!;
  });
  return out;
}

/** Number of words of field `fid` in the record (0 when it has none). */
export function fieldWordCount(rec: DocRecord, fid: number): number {
  const c = rec.counts;
  for (let i = 0; i < c.length; i++) if (c[i]! >>> 16 === fid) return c[i]! & 0xffff;
  return 0;
}

// Binary layout (little-endian u32 words): nTokens, nCounts, tokens, counts, then the
// values as UTF-8 JSON. Every platform Node supports in production is little-endian.
export function encodeRecord(rec: DocRecord): Buffer {
  const head = new Uint32Array(2 + rec.tokens.length + rec.counts.length);
  head[0] = rec.tokens.length;
  head[1] = rec.counts.length;
  head.set(rec.tokens, 2);
  head.set(rec.counts, 2 + rec.tokens.length);
  const fixed = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  if (!rec.values) return Buffer.from(fixed);
  return Buffer.concat([fixed, Buffer.from(JSON.stringify(rec.values))]);
}

export function decodeRecord(buf: Buffer): DocRecord {
  const nTok = buf.readUInt32LE(0);
  const nCnt = buf.readUInt32LE(4);
  const words = 2 + nTok + nCnt;
  const copy = new Uint32Array(words);
  new Uint8Array(copy.buffer).set(buf.subarray(0, words * 4));
  const tokens = copy.subarray(2, 2 + nTok);
  const counts = copy.subarray(2 + nTok, words);
  const rest = buf.length > words * 4 ? buf.subarray(words * 4).toString() : '';
  return { tokens, counts, values: rest ? (JSON.parse(rest) as Record<string, FieldValue[]>) : null };
}
