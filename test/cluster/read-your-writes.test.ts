// The loop an application runs behind a load balancer, with the official client and no
// special header: write, wait for the task, read it back through whichever node the balancer
// picks. Every read must reflect every task the client saw finished.
// RYW_QUIET_ROUNDS and RYW_IMPORT_ROUNDS change the number of rounds; RYW_FLAGS adds node
// flags (RYW_FLAGS='--read-consistency stale' shows what the loop catches without the mechanism).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Meilisearch, MeilisearchApiError } from 'meilisearch';
import { TestCluster } from '../helpers/cluster.js';
import { startHaproxy, type Balancer } from '../helpers/haproxy.js';

const QUIET_ROUNDS = Number(process.env['RYW_QUIET_ROUNDS'] ?? 300);
const IMPORT_ROUNDS = Number(process.env['RYW_IMPORT_ROUNDS'] ?? 100);
/** Clients running the loop side by side (as an application's several processes would), sharing the rounds. */
const LOOPS = 4;
const IMPORT_BATCH = 5_000;
// The client polls a task every 50 ms by default; 10 ms keeps the rounds short in CI.
const WAIT = { timeout: 60_000, interval: 10 };

let c: TestCluster;
let lb: Balancer;
let client: Meilisearch;

beforeAll(async () => {
  // The loop checks what reads return, not how fast: a loaded machine may make a read wait
  // longer than the default --read-timeout, which would answer 503, not stale data.
  const flags = ['--read-timeout', '30s', ...(process.env['RYW_FLAGS']?.split(' ') ?? [])];
  c = await TestCluster.start({ flags });
  await c.waitForLeader();
  lb = await startHaproxy(c.ports());
  client = new Meilisearch({ host: lb.url });
  await client.index('ryw').updateFilterableAttributes(['tag']).waitTask(WAIT);
}, 120_000);

afterAll(async () => {
  await lb?.stop();
  await c?.stop();
});

async function leaderChanges(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^trine_raft_leader_changes_total (\S+)$/m.exec(text)?.[1] ?? 0);
}

/** One round; returns what it read stale (nothing, when all is well). */
async function round(name: string): Promise<string[]> {
  const idx = client.index<{ id: string; text?: string; tag?: string; v: number }>('ryw');
  // A word no other document holds, so that the search has exactly one document to find.
  const word = `q${name.replace(/\W/g, 'z')}k`;
  const stale: string[] = [];
  await idx.addDocuments([{ id: name, text: `${word} shared words`, tag: word, v: 1 }]).waitTask(WAIT);
  const found = await idx.search(word);
  if (!found.hits.some((h) => h.id === name)) stale.push(`${name}: the search for ${word} missed the new document`);
  try {
    await idx.getDocument(name);
  } catch (e) {
    if (!(e instanceof MeilisearchApiError) || e.response.status !== 404) throw e;
    stale.push(`${name}: getDocument answered 404`);
  }
  const filtered = await idx.search('', { filter: `tag = ${word}` });
  if (!filtered.hits.some((h) => h.id === name)) stale.push(`${name}: the filtered search missed the new document`);
  await idx.updateDocuments([{ id: name, v: 2 }]).waitTask(WAIT);
  const doc = await idx.getDocument(name);
  if (doc.v !== 2) stale.push(`${name}: the update was not visible (v = ${doc.v})`);
  return stale;
}

/** `rounds` rounds shared by LOOPS clients running side by side; returns every stale read. */
async function rounds(count: number, prefix: string): Promise<string[]> {
  const stale: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: LOOPS }, async () => {
      for (let i = next++; i < count; i = next++) stale.push(...(await round(`${prefix}-${i}`)));
    }),
  );
  return stale;
}

describe('read your writes through a load balancer', () => {
  it(`sees every write at once, ${QUIET_ROUNDS} rounds on a quiet cluster`, async () => {
    const before = await lb.stats();
    expect(await rounds(QUIET_ROUNDS, 'quiet')).toEqual([]);
    // The balancer really spread the rounds over the three nodes.
    const after = await lb.stats();
    for (const n of ['n1', 'n2', 'n3']) expect(after[n]!.ok - before[n]!.ok).toBeGreaterThan(QUIET_ROUNDS);
  }, 600_000);

  it(`sees every write at once, ${IMPORT_ROUNDS} rounds while another client imports ${IMPORT_BATCH}-document batches`, async () => {
    let importing = true;
    let imported = 0;
    const importer = (async () => {
      const idx = client.index('bulk');
      // One batch at a time, as an importer that waits for each before sending the next.
      for (let b = 0; importing; b++) {
        const docs = Array.from({ length: IMPORT_BATCH }, (_, i) => ({ id: b * IMPORT_BATCH + i, text: `bulk ${i % 97} ${b}` }));
        await idx.addDocuments(docs).waitTask(WAIT);
        imported += IMPORT_BATCH;
      }
    })();
    let stale: string[] = [];
    const changes = () => Promise.all([0, 1, 2].map((i) => leaderChanges(c.url(i))));
    const before = await changes();
    const started = performance.now();
    try {
      stale = await rounds(IMPORT_ROUNDS, 'import');
    } finally {
      importing = false;
      await importer;
    }
    const after = await changes();
    console.log(
      `${IMPORT_ROUNDS} rounds in ${((performance.now() - started) / 1000).toFixed(0)} s while ${imported} documents were imported; leader changes meanwhile: ${Math.max(...after.map((a, i) => a - before[i]!))}`,
    );
    expect(stale).toEqual([]);
    expect(imported).toBeGreaterThanOrEqual(IMPORT_BATCH * 2);
  }, 900_000);
});
