// The corpora of the `longdocs` benchmark, both from Debian, both of long documents:
// - dictionary: GCIDE (the package `dict-gcide`: Webster's 1913 and WordNet, about 126 000
//   articles), one document per article: its headword, its heading line and its full text;
// - catalog: the distribution's package descriptions (`Translation-en`, about 64 000
//   packages), one document per package: name, summary and long description.
// Both are fetched once from the Debian mirror apt uses, into node_modules/.cache/trine-bench
// (BENCH_GCIDE_DIR may name a folder holding gcide.index and gcide.dict.dz, BENCH_TRANSLATIONS
// a Translation-en.xz, instead).

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ROOT } from '../helpers/node.js';

export interface LongDoc {
  id: number;
  [field: string]: string | number;
}

export interface LongCorpus {
  name: string;
  docs: LongDoc[];
  /** Searchable attributes, most important first. */
  fields: string[];
  /** The field whose words name a document (headword, package name). */
  title: string;
  /** The field that queries of several words come from. */
  body: string;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function b64number(s: string): number {
  let n = 0;
  for (const c of s) n = n * 64 + B64.indexOf(c);
  return n;
}

function gcideFiles(): { index: string; dict: string } {
  const dirs = [process.env['BENCH_GCIDE_DIR'], '/usr/share/dictd', join(ROOT, 'node_modules/.cache/trine-bench/gcide/usr/share/dictd')];
  for (const d of dirs) {
    if (d !== undefined && existsSync(join(d, 'gcide.index'))) return { index: join(d, 'gcide.index'), dict: join(d, 'gcide.dict.dz') };
  }
  const cache = join(ROOT, 'node_modules/.cache/trine-bench');
  mkdirSync(cache, { recursive: true });
  try {
    execFileSync('apt-get', ['download', 'dict-gcide'], { cwd: cache, stdio: 'ignore' });
    const deb = readdirSync(cache).find((f) => f.startsWith('dict-gcide_') && f.endsWith('.deb'));
    if (deb === undefined) throw new Error('no .deb after apt-get download');
    execFileSync('dpkg-deb', ['-x', join(cache, deb), join(cache, 'gcide')]);
  } catch (e) {
    throw new Error(`the dictionary corpus needs Debian's dict-gcide (apt-get download dict-gcide, or BENCH_GCIDE_DIR): ${(e as Error).message}`);
  }
  return gcideFiles();
}

/** GCIDE's markup, cross-reference braces and source tags, left out of the indexed text. */
function cleanGcide(text: string): string {
  return text
    .replace(/\[(1913 Webster|WordNet 1\.5|PJC|RN=[^\]]*|Century Dict\.|Webster 1913 Suppl\.)\]/g, ' ')
    .replace(/[{}\\]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

export function loadDictionary(): LongCorpus {
  const { index, dict } = gcideFiles();
  const text = gunzipSync(readFileSync(dict));
  const seen = new Set<string>();
  const docs: LongDoc[] = [];
  for (const line of readFileSync(index, 'utf8').split('\n')) {
    const [word, off, len] = line.split('\t');
    if (word === undefined || off === undefined || len === undefined || word.startsWith('00-database')) continue;
    const key = `${off}/${len}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const start = b64number(off);
    const article = text.toString('utf8', start, start + b64number(len));
    const nl = article.indexOf('\n');
    const heading = cleanGcide(nl < 0 ? article : article.slice(0, nl));
    const definition = cleanGcide(nl < 0 ? '' : article.slice(nl + 1));
    docs.push({ id: docs.length, headword: word, heading, definition });
  }
  return { name: 'dictionary', docs, fields: ['headword', 'heading', 'definition'], title: 'headword', body: 'definition' };
}

/**
 * The distribution's English package descriptions (`main/i18n/Translation-en.xz`), fetched
 * once from the mirror apt uses and checked against the checksum its signed release file
 * lists.
 */
async function translationsFile(): Promise<string> {
  const named = process.env['BENCH_TRANSLATIONS'];
  if (named !== undefined) return named;
  const cache = join(ROOT, 'node_modules/.cache/trine-bench');
  const file = join(cache, 'Translation-en.xz');
  if (existsSync(file)) return file;
  const dir = '/var/lib/apt/lists';
  const release = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('_InRelease')) : [];
  // The distribution's own release file is the largest; security and updates ones are small.
  const main = release.sort((a, b) => statSync(join(dir, b)).size - statSync(join(dir, a)).size)[0];
  if (main === undefined) throw new Error('the catalog corpus needs apt lists (apt-get update) or BENCH_TRANSLATIONS naming a Translation-en.xz');
  const url = `http://${main.replace(/_InRelease$/, '').replaceAll('_', '/')}/main/i18n/Translation-en.xz`;
  const sum = new RegExp(`^ ([0-9a-f]{64})\\s+\\d+ main/i18n/Translation-en\\.xz$`, 'm').exec(readFileSync(join(dir, main), 'utf8'))?.[1];
  const res = await fetch(url);
  if (!res.ok) throw new Error(`the catalog corpus: ${url} answered ${res.status}`);
  const data = Buffer.from(await res.arrayBuffer());
  if (sum !== undefined && createHash('sha256').update(data).digest('hex') !== sum) throw new Error(`the catalog corpus: ${url} does not match its release file's checksum`);
  mkdirSync(cache, { recursive: true });
  writeFileSync(file, data);
  return file;
}

export async function loadCatalog(): Promise<LongCorpus> {
  const raw = execFileSync('xz', ['-dc', await translationsFile()], { maxBuffer: 1 << 30 }).toString('utf8');
  const docs: LongDoc[] = [];
  for (const stanza of raw.split(/\n\n+/)) {
    const name = /^Package: (.+)$/m.exec(stanza)?.[1];
    const desc = /^Description-en: (.*)\n?((?: .*\n?)*)/m.exec(stanza);
    if (name === undefined || desc === null) continue;
    const description = desc[2]!
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '.' && l !== '')
      .join(' ');
    docs.push({ id: docs.length, name, summary: desc[1]!.trim(), description });
  }
  return { name: 'catalog', docs, fields: ['name', 'summary', 'description'], title: 'name', body: 'description' };
}
