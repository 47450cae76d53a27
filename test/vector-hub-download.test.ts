import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hubModelEmbedder } from '../src/engine/vector/hub-model/hub-embedder.js';
import { closeModelWorkers } from '../src/engine/vector/hub-model/model-worker.js';
import { TINY, modelFiles } from './helpers/hub-model.js';
import { COMMIT, startHubServer, type HubServer } from './helpers/hub-server.js';
import { startTestNode, tempDir, type TestNode } from './helpers/node.js';
import { call, write } from './helpers/vector-api.js';

let hub: HubServer;
let cache: string;
let t: TestNode;

const repo = (model: string) => join(cache, `models--${model.replace('/', '--')}`);
const docs = [
  { id: 1, title: 'apple pie' },
  { id: 2, title: 'red car' },
];

async function embedderTask(index: string, model: string, expect: 'succeeded' | 'failed', extra: Record<string, unknown> = {}) {
  await write(t, 'PATCH', `/indexes/${index}/settings`, { embedders: { m: { source: 'huggingFace', model, documentTemplate: '{{doc.title}}', ...extra } } });
  return write(t, 'POST', `/indexes/${index}/documents`, docs, expect);
}

beforeAll(async () => {
  hub = await startHubServer();
  hub.models.set('org/tiny', modelFiles(TINY));
  hub.models.set('org/tiny-cls', modelFiles({ ...TINY, pooling: 'cls', seed: 3 }));
  hub.models.set('org/damaged', modelFiles({ ...TINY, seed: 5 }));
  const nopool = modelFiles({ ...TINY, seed: 6 });
  nopool.delete('1_Pooling/config.json');
  hub.models.set('plain', nopool);
  const pytorch = modelFiles({ ...TINY, seed: 4 });
  pytorch.set('pytorch_model.bin', pytorch.get('model.safetensors')!);
  pytorch.delete('model.safetensors');
  hub.models.set('org/pytorch', pytorch);
  cache = tempDir('trine-hub-cache-');
  t = await startTestNode(['--hub-models-dir', cache, '--hub-endpoint', hub.url]);
});
afterAll(async () => {
  await t?.close();
  await closeModelWorkers();
  await hub?.close();
  if (cache) rmSync(cache, { recursive: true, force: true });
});
beforeEach(() => {
  hub.requests.length = 0;
  hub.fault = null;
  hub.delayMs = 0;
});

describe('models from the hub', () => {
  it('downloads the model files on first use, into the cache, at the commit the hub names', async () => {
    // Left over by a process that died mid-download a while ago: cleared on the way.
    const stale = join(repo('org/tiny'), '.incomplete-old');
    mkdirSync(stale, { recursive: true });
    writeFileSync(join(stale, 'config.json'), '{"hidden');
    utimesSync(stale, new Date(Date.now() - 2 * 86400_000), new Date(Date.now() - 2 * 86400_000));
    await embedderTask('fetched', 'org/tiny', 'succeeded');
    expect(hub.requests).toEqual(['config.json', 'tokenizer.json', 'model.safetensors', '1_Pooling/config.json'].map((f) => `/org/tiny/resolve/main/${f}`));
    const snapshot = join(repo('org/tiny'), 'snapshots', COMMIT);
    for (const [file, bytes] of hub.models.get('org/tiny')!) expect(readFileSync(join(snapshot, file))).toEqual(bytes);
    expect(readFileSync(join(repo('org/tiny'), 'refs', 'main'), 'utf8')).toBe(COMMIT);
    const r = await call(t, 'POST', '/indexes/fetched/search', { q: 'red car', hybrid: { embedder: 'm', semanticRatio: 1 }, limit: 1 });
    expect(r.body['hits'][0]).toMatchObject({ id: 2 });
    // No leftovers of the download.
    expect(readdirSync(repo('org/tiny')).sort()).toEqual(['refs', 'snapshots']);
  });

  it('reuses the cache: no request for a model already there, even with the hub gone', async () => {
    await embedderTask('again', 'org/tiny', 'succeeded');
    await embedderTask('by-commit', 'org/tiny', 'succeeded', { revision: COMMIT });
    expect(hub.requests).toEqual([]);
    // A node restarted on the same cache with an unreachable hub still embeds and searches.
    await t.close({ keepData: true });
    t = await startTestNode(['--hub-models-dir', cache, '--hub-endpoint', 'http://127.0.0.1:9'], t.dir);
    const r = await call(t, 'POST', '/indexes/fetched/search', { q: 'apple pie', hybrid: { embedder: 'm', semanticRatio: 1 }, limit: 1 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body['hits'][0]).toMatchObject({ id: 1 });
    await write(t, 'POST', '/indexes/fetched/documents', [{ id: 3, title: 'fast car' }]);
    await t.close({ keepData: true });
    t = await startTestNode(['--hub-models-dir', cache, '--hub-endpoint', hub.url], t.dir);
  });

  it('goes without a pooling config the model lacks, and names a model the hub lacks or one with PyTorch weights only', async () => {
    await embedderTask('plain', 'plain', 'succeeded');
    expect(hub.requests.at(-1)).toBe('/plain/resolve/main/1_Pooling/config.json');
    const missing = await embedderTask('missing', 'org/absent', 'failed');
    expect(missing['error']['code']).toBe('vector_embedding_error');
    expect(missing['error']['message']).toBe(
      'Index `missing`: While embedding documents for embedder `m`: user error: could not download `config.json` of model `org/absent` (revision `main`) from `' +
        hub.url +
        '/org/absent/resolve/main/config.json`: the hub answered 404 Not Found\n  - Hint: check the model id and `revision`',
    );
    const pytorch = await embedderTask('pytorch', 'org/pytorch', 'failed');
    expect(pytorch['error']['message']).toContain(
      'user error: model `org/pytorch` only ships PyTorch weights (`pytorch_model.bin`)\n  - Note: Trine reads weights in the safetensors format (`model.safetensors`); pick a revision or a model that has them',
    );
    expect(existsSync(repo('org/pytorch')) ? readdirSync(repo('org/pytorch')) : []).toEqual([]);
    // Without a model, the reference's default model at the commit it pins.
    await write(t, 'PATCH', '/indexes/default/settings', { embedders: { m: { source: 'huggingFace', documentTemplate: '{{doc.title}}' } } });
    const byDefault = await write(t, 'POST', '/indexes/default/documents', docs, 'failed');
    expect(byDefault['error']['message']).toContain('`config.json` of model `BAAI/bge-base-en-v1.5` (revision `617ca489d9e86b49b8167676d8220688b99db36e`)');
    const badRevision = await embedderTask('rev', 'org/tiny-cls', 'failed', { revision: 'v9' });
    expect(badRevision['error']['message']).toContain('`config.json` of model `org/tiny-cls` (revision `v9`)');
    expect(existsSync(repo('org/absent')) ? readdirSync(repo('org/absent')) : []).toEqual([]);
  });

  it.each([
    ['cut off mid-way', 'cut', /could not download `model.safetensors` of model `org\/damaged`.*: (terminated|aborted|other side closed)/],
    ['truncated', 'truncate', /the weights of model `org\/damaged` downloaded from .* are damaged: the file holds \d+ bytes where its header declares \d+/],
    ['not a model', 'garbage', /the weights of model `org\/damaged` downloaded from .* are damaged: not a safetensors file/],
  ] as const)('fails the task clearly and keeps nothing of a download %s, then succeeds once the hub is right', async (_, kind, message) => {
    hub.fault = { file: 'model.safetensors', kind };
    const task = await embedderTask(`damaged-${kind}`, 'org/damaged', 'failed');
    expect(task['error']['code']).toBe('vector_embedding_error');
    expect(task['error']['message']).toMatch(message);
    expect(readdirSync(repo('org/damaged'))).toEqual([]);
    // Nothing half-written was kept: the next attempt downloads everything again.
    hub.fault = null;
    hub.requests.length = 0;
    await write(t, 'POST', `/indexes/damaged-${kind}/documents`, docs);
    expect(hub.requests.filter((p) => p.endsWith('/model.safetensors'))).toEqual(['/org/damaged/resolve/main/model.safetensors']);
    // Later cases download again: forget the good copy.
    rmSync(repo('org/damaged'), { recursive: true, force: true });
  });

  it('does not keep a search query waiting past its deadline for a download, which goes on', async () => {
    hub.models.set('org/slow', modelFiles({ ...TINY, seed: 8 }));
    hub.delayMs = 300;
    const e = hubModelEmbedder({ source: 'hubModel', model: 'org/slow' }, { dir: cache, endpoint: hub.url });
    await expect(e.embed(['red car'], Date.now() + 200)).rejects.toThrow('runtime error: model `org/slow` did not answer in time: it may still be downloading or loading');
    // The download went on: once it is done, queries are answered.
    const [v] = await e.embed(['red car']);
    expect(v).toHaveLength(TINY.hidden);
    expect(hub.requests.filter((p) => p.startsWith('/org/slow/'))).toHaveLength(4);
    hub.delayMs = 0;
    expect(await e.embed(['red car'], Date.now() + 5000)).toEqual([v]);
  });

  it('refuses model ids that are not hub ids', async () => {
    const task = await embedderTask('weird', '../escape', 'failed');
    expect(task['error']['message']).toContain('`../escape` is not a valid model id');
  });
});
