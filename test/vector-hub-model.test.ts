import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Bert, firstPosition, type BertConfig } from '../src/engine/vector/hub-model/bert.js';
import { hubModelEmbedder } from '../src/engine/vector/hub-model/hub-embedder.js';
import { tokenizerFor } from '../src/engine/vector/hub-model/model-files.js';
import { closeModelWorkers } from '../src/engine/vector/hub-model/model-worker.js';
import { pool, poolingOf } from '../src/engine/vector/hub-model/pooling.js';
import { readSafetensors, writeSafetensors } from '../src/engine/vector/hub-model/safetensors.js';
import { WordPiece } from '../src/engine/vector/hub-model/wordpiece.js';
import { FIXED_VOCAB, TINY, textOfTokens, writeModel, type ModelShape } from './helpers/hub-model.js';
import { ROOT, startTestNode, tempDir, type TestNode } from './helpers/node.js';
import { call, cosine, write } from './helpers/vector-api.js';

const hub = (dir: string) => ({ dir, endpoint: 'http://127.0.0.1:9' });

/** The in-process forward pass and pooling: what the native runtime must agree with. */
function oracle(dir: string, texts: string[], pooling?: string): Float32Array[] {
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as BertConfig;
  const bert = new Bert(config, readSafetensors(readFileSync(join(dir, 'model.safetensors'))));
  const tok = tokenizerFor(JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')));
  const mode = poolingOf(dir, pooling);
  const first = firstPosition(config);
  return texts.map((t) => {
    const ids = tok.encode(t, config.max_position_embeddings - first);
    return pool(bert.forward(ids), 0, ids.length, config.hidden_size, mode);
  });
}

let t: TestNode;
let models: string;
const SMALL: ModelShape = { hidden: 32, heads: 4, layers: 2, intermediate: 64, extraWords: 300, maxPositions: 64 };
const VARIANTS: [string, ModelShape][] = [
  ['tiny-cls', { ...TINY, pooling: 'cls' }],
  ['tiny-mean', TINY],
  ['small-mean', SMALL],
  ['small-max-tanh-prefixed', { ...SMALL, pooling: 'max', activation: 'gelu_new', prefixed: true, seed: 7 }],
  ['small-sqrt', { ...SMALL, pooling: 'meanSqrtLen', seed: 9 }],
  ['small-last', { ...SMALL, pooling: 'lastToken', seed: 11 }],
  ['xlmr-mean', { ...SMALL, xlmRoberta: true, prefixed: true, seed: 13 }],
];

beforeAll(async () => {
  models = tempDir('trine-models-');
  for (const [name, shape] of VARIANTS) writeModel(join(models, name), shape);
  t = await startTestNode(['--hub-models-dir', models, '--hub-endpoint', 'http://127.0.0.1:9']);
});
afterAll(async () => {
  await t?.close();
  await closeModelWorkers();
  if (models) rmSync(models, { recursive: true, force: true });
});

describe('local models (hubModel)', () => {
  it('tokenizes with WordPiece, lowercased, within the length limit', () => {
    const tok = new WordPiece({ model: { type: 'WordPiece', vocab: Object.fromEntries(FIXED_VOCAB.map((w, i) => [w, i])) } });
    expect(tok.encode('Unaffable, RED car!', 32)).toEqual([2, 6, 7, 8, 11, 9, 10, 1, 3]);
    expect(tok.encode('apple pie apple pie', 4)).toEqual([2, 4, 5, 3]);
  });

  it('tokenizes XLM-RoBERTa models with their SentencePiece Unigram tokenizer', () => {
    const dir = join(models, 'xlmr-mean');
    const tok = tokenizerFor(JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')));
    // <s> ▁un aff able , ▁red ▁car ▁w7 </s>
    expect(tok.encode('Unaffable, red  car w7', 64)).toEqual([0, 6, 7, 8, 11, 9, 10, 14 + 7, 2]);
    expect(tok.encode('apple pie apple pie', 4)).toEqual([0, 4, 5, 4]);
  });

  it('reads back the safetensors it writes, and refuses a truncated file', () => {
    const bytes = writeSafetensors({ w: { shape: [2, 2], data: Float32Array.from([1, 2, 3, 4]) } });
    expect(readSafetensors(bytes).get('w')).toEqual({ shape: [2, 2], data: Float32Array.from([1, 2, 3, 4]) });
    expect(() => readSafetensors(bytes.subarray(0, bytes.length - 4))).toThrow(/truncated or corrupt: tensor `w`/);
    expect(() => readSafetensors(bytes.subarray(0, 12))).toThrow(/truncated/);
  });

  it.each(VARIANTS)('embeds like the in-process oracle, batched and padded (%s)', async (name, shape) => {
    const dir = join(models, name);
    // Lengths differ, so the batch is padded; the runtime must mask the padding out.
    const texts = ['red apple pie', 'unaffable fast car , red', 'apple', textOfTokens(shape, 30, 1), textOfTokens(shape, 12, 2)];
    const got = await hubModelEmbedder({ source: 'hubModel', model: dir }, hub(models)).embed(texts);
    const want = oracle(dir, texts);
    expect(got.length).toBe(texts.length);
    for (let i = 0; i < texts.length; i++) {
      expect(got[i]!.length).toBe(shape.hidden);
      expect(cosine(got[i]!, want[i]!)).toBeGreaterThan(1 - 1e-4);
    }
  });

  it('honours pooling: useModel follows the model, forceMean and forceCls override it', async () => {
    const dir = join(models, 'tiny-cls');
    const embed = (pooling?: string) => hubModelEmbedder({ source: 'hubModel', model: dir, ...(pooling ? { pooling } : {}) }, hub(models)).embed(['red apple pie']);
    const [useModel] = await embed();
    const [cls] = await embed('forceCls');
    const [mean] = await embed('forceMean');
    expect(useModel).toEqual(cls);
    expect(cosine(mean!, oracle(dir, ['red apple pie'], 'forceMean')[0]!)).toBeGreaterThan(1 - 1e-4);
    expect(cosine(mean!, cls!)).toBeLessThan(0.999);
    // The same text gives the same vector.
    expect((await embed('forceMean'))[0]).toEqual(mean);
  });

  it('answers a search query while a long indexing job runs on the same model', async () => {
    const dir = join(models, 'small-mean');
    const e = hubModelEmbedder({ source: 'hubModel', model: dir }, hub(models));
    await e.embed(['warm up']);
    let bulkDone = false;
    const bulk = e.embed(Array.from({ length: 600 }, (_, i) => textOfTokens(SMALL, 60, i))).then((v) => ((bulkDone = true), v));
    const [q] = await e.embed(['red car'], Date.now() + 10_000);
    expect(bulkDone).toBe(false);
    expect(cosine(q!, oracle(dir, ['red car'])[0]!)).toBeGreaterThan(1 - 1e-4);
    expect((await bulk).length).toBe(600);
  });

  it('embeds from a script run with flags meant for its own entry, and lets the process end once idle', () => {
    const module = join(ROOT, 'dist/src/engine/vector/hub-model/hub-embedder.js');
    const script = `const { hubModelEmbedder } = await import(${JSON.stringify(module)});
      const [v] = await hubModelEmbedder({ model: ${JSON.stringify(join(models, 'tiny-mean'))} }, { dir: '/nonexistent', endpoint: 'http://127.0.0.1:9' }).embed(['red car']);
      console.log('dims', v.length);`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect(r.stdout.trim(), r.stderr).toBe(`dims ${TINY.hidden}`);
    expect(r.status).toBe(0);
  });

  it('indexes and searches with a model from the models directory, and names a missing or unsupported one', async () => {
    await write(t, 'PATCH', '/indexes/hub/settings', { embedders: { m: { source: 'huggingFace', model: 'tiny-mean', documentTemplate: '{{doc.title}}' } } });
    await write(t, 'POST', '/indexes/hub/documents', [
      { id: 1, title: 'apple pie' },
      { id: 2, title: 'red car' },
      { id: 3, title: 'fast car' },
    ]);
    const doc = await call(t, 'GET', '/indexes/hub/documents/1?retrieveVectors=true');
    const [expected] = oracle(join(models, 'tiny-mean'), ['apple pie']);
    const stored = doc.body['_vectors']['m'];
    expect(stored['regenerate']).toBe(true);
    expect(cosine(Float32Array.from(stored['embeddings'][0]), expected!)).toBeGreaterThan(1 - 1e-4);
    const r = await call(t, 'POST', '/indexes/hub/search', { q: 'apple pie', hybrid: { embedder: 'm', semanticRatio: 1 }, showRankingScore: true, limit: 1 });
    expect(r.body['hits'][0]).toMatchObject({ id: 1 });
    expect(r.body['hits'][0]['_rankingScore']).toBeCloseTo(1, 4);

    const absent = await write(t, 'PATCH', '/indexes/hub/settings', { embedders: { m: { model: '/no/such/model' } } }, 'failed');
    expect(absent['error']['code']).toBe('vector_embedding_error');
    expect(absent['error']['message']).toContain('model `/no/such/model` is not available locally');

    const odd = join(models, 'odd');
    writeModel(odd, TINY);
    const cfg = JSON.parse(readFileSync(join(odd, 'config.json'), 'utf8'));
    (await import('node:fs')).writeFileSync(join(odd, 'config.json'), JSON.stringify({ ...cfg, architectures: ['GPT2Model'], model_type: 'gpt2' }));
    const unsupported = await write(t, 'PATCH', '/indexes/hub/settings', { embedders: { m: { model: odd } } }, 'failed');
    expect(unsupported['error']['message']).toContain(
      'model `' + odd + '` appears to be unsupported\n  - Note: model has declared architectures `["GPT2Model"]`, only models with architecture `"BertModel"` or `"XLMRobertaModel"` are supported.',
    );
  });
});
