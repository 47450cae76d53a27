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
const IMPORT_BATCH = 5_000;
// The client polls a task every 50 ms by default; 10 ms keeps the rounds short in CI.
const WAIT = { timeout: 60_000, interval: 10 };

let c: TestCluster;
let lb: Balancer;
let client: Meilisearch;

beforeAll(async () => {
  c = await TestCluster.start(process.env['RYW_FLAGS'] ? { flags: process.env['RYW_FLAGS'].split(' ') } : {});
  await c.waitForLeader();
  lb = await startHaproxy(c.ports());
  client = new Meilisearch({ host: lb.url });
  await client.index('ryw').updateFilterableAttributes(['tag']).waitTask(WAIT);
}, 120_000);

afterAll(async () => {
  await lb?.stop();
  await c?.stop();
});

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

describe('read your writes through a load balancer', () => {
  it(`sees every write at once, ${QUIET_ROUNDS} rounds on a quiet cluster`, async () => {
    const before = await lb.stats();
    const stale: string[] = [];
    for (let i = 0; i < QUIET_ROUNDS; i++) stale.push(...(await round(`quiet-${i}`)));
    expect(stale).toEqual([]);
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
        const docs = Array.from({ length: IMPORT_BATCH }, (_, i) => ({ id: b * IMPORT_BATCH + i, text: `bulk document ${i} of batch ${b} with a few words` }));
        await idx.addDocuments(docs).waitTask(WAIT);
        imported += IMPORT_BATCH;
      }
    })();
    const stale: string[] = [];
    try {
      for (let i = 0; i < IMPORT_ROUNDS; i++) stale.push(...(await round(`import-${i}`)));
    } finally {
      importing = false;
      await importer;
    }
    expect(stale).toEqual([]);
    expect(imported).toBeGreaterThanOrEqual(IMPORT_BATCH * 2);
  }, 900_000);
});
