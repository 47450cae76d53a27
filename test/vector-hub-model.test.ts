import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubModelEmbedder } from '../src/engine/vector/hub-model/hub-embedder.js';
import { readSafetensors, writeSafetensors, type Tensor } from '../src/engine/vector/hub-model/safetensors.js';
import { WordPiece } from '../src/engine/vector/hub-model/wordpiece.js';
import { startTestNode, tempDir, type TestNode } from './helpers/node.js';
import { call, write } from './helpers/vector-api.js';

const VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', 'apple', 'pie', 'un', '##aff', '##able', 'red', 'car', ',', 'fast'];
const H = 8;
const I = 16;

/** A one-layer BERT with seeded random weights, written as a model directory. */
function tinyModel(dir: string, clsPooling: boolean): void {
  let s = 12345;
  const rnd = () => ((s = (s * 1103515245 + 12345) >>> 0) / 4294967296 - 0.5) * 0.5;
  const t = (shape: number[], fill?: number): Tensor => ({ shape, data: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => fill ?? rnd()) });
  const tensors: Record<string, Tensor> = {
    'embeddings.word_embeddings.weight': t([VOCAB.length, H]),
    'embeddings.position_embeddings.weight': t([32, H]),
    'embeddings.token_type_embeddings.weight': t([2, H]),
    'embeddings.LayerNorm.weight': t([H], 1),
    'embeddings.LayerNorm.bias': t([H], 0),
  };
  const p = 'encoder.layer.0';
  for (const n of ['attention.self.query', 'attention.self.key', 'attention.self.value', 'attention.output.dense']) {
    tensors[`${p}.${n}.weight`] = t([H, H]);
    tensors[`${p}.${n}.bias`] = t([H]);
  }
  tensors[`${p}.attention.output.LayerNorm.weight`] = t([H], 1);
  tensors[`${p}.attention.output.LayerNorm.bias`] = t([H], 0);
  tensors[`${p}.intermediate.dense.weight`] = t([I, H]);
  tensors[`${p}.intermediate.dense.bias`] = t([I]);
  tensors[`${p}.output.dense.weight`] = t([H, I]);
  tensors[`${p}.output.dense.bias`] = t([H]);
  tensors[`${p}.output.LayerNorm.weight`] = t([H], 1);
  tensors[`${p}.output.LayerNorm.bias`] = t([H], 0);
  mkdirSync(join(dir, '1_Pooling'), { recursive: true });
  writeFileSync(join(dir, 'model.safetensors'), writeSafetensors(tensors));
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({ architectures: ['BertModel'], hidden_size: H, num_attention_heads: 2, num_hidden_layers: 1, intermediate_size: I, max_position_embeddings: 32, hidden_act: 'gelu' }),
  );
  writeFileSync(
    join(dir, 'tokenizer.json'),
    JSON.stringify({ normalizer: { type: 'BertNormalizer', lowercase: true }, model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', vocab: Object.fromEntries(VOCAB.map((w, i) => [w, i])) } }),
  );
  writeFileSync(join(dir, '1_Pooling', 'config.json'), JSON.stringify({ pooling_mode_cls_token: clsPooling, pooling_mode_mean_tokens: !clsPooling }));
}

let t: TestNode;
let models: string;
beforeAll(async () => {
  models = tempDir('trine-models-');
  tinyModel(join(models, 'tiny-cls'), true);
  tinyModel(join(models, 'tiny-mean'), false);
  t = await startTestNode();
});
afterAll(async () => {
  await t.close();
});

describe('in-process model (hubModel)', () => {
  it('tokenizes with WordPiece, lowercased, within the length limit', () => {
    const tok = new WordPiece({ model: { type: 'WordPiece', vocab: Object.fromEntries(VOCAB.map((w, i) => [w, i])) } });
    expect(tok.encode('Unaffable, RED car!', 32)).toEqual([2, 6, 7, 8, 11, 9, 10, 1, 3]);
    expect(tok.encode('apple pie apple pie', 4)).toEqual([2, 4, 5, 3]);
  });

  it('reads back the safetensors it writes', () => {
    const back = readSafetensors(writeSafetensors({ w: { shape: [2, 2], data: Float32Array.from([1, 2, 3, 4]) } }));
    expect(back.get('w')).toEqual({ shape: [2, 2], data: Float32Array.from([1, 2, 3, 4]) });
  });

  it('honours pooling: useModel follows the model, forceMean and forceCls override it', async () => {
    const dir = join(models, 'tiny-cls');
    const embed = (pooling?: string) => hubModelEmbedder({ source: 'hubModel', model: dir, ...(pooling ? { pooling } : {}) }).embed(['red apple pie']);
    const [useModel] = await embed();
    const [cls] = await embed('forceCls');
    const [mean] = await embed('forceMean');
    expect(useModel).toEqual(cls);
    expect(mean).not.toEqual(cls);
    expect(mean!.length).toBe(H);
    // Deterministic: the same text gives the same vector.
    expect((await embed('forceMean'))[0]).toEqual(mean);
  });

  it('indexes and searches with a model from the models directory, and names a missing one', async () => {
    process.env['TRINE_HUB_MODELS_DIR'] = models;
    await write(t, 'PATCH', '/indexes/hub/settings', { embedders: { m: { source: 'huggingFace', model: 'tiny-mean', documentTemplate: '{{doc.title}}' } } });
    await write(t, 'POST', '/indexes/hub/documents', [
      { id: 1, title: 'apple pie' },
      { id: 2, title: 'red car' },
      { id: 3, title: 'fast car' },
    ]);
    const doc = await call(t, 'GET', '/indexes/hub/documents/1?retrieveVectors=true');
    const [expected] = await hubModelEmbedder({ source: 'hubModel', model: 'tiny-mean' }).embed(['apple pie']);
    expect(doc.body['_vectors']['m']).toEqual({ embeddings: [Array.from(expected!)], regenerate: true });
    const r = await call(t, 'POST', '/indexes/hub/search', { q: 'apple pie', hybrid: { embedder: 'm', semanticRatio: 1 }, showRankingScore: true, limit: 1 });
    expect(r.body['hits'][0]).toMatchObject({ id: 1 });
    expect(r.body['hits'][0]['_rankingScore']).toBeCloseTo(1, 5);

    const task = await write(t, 'PATCH', '/indexes/hub/settings', { embedders: { m: { model: 'absent-model' } } }, 'failed');
    expect(task['error']['code']).toBe('vector_embedding_error');
    expect(task['error']['message']).toContain('model `absent-model` is not available locally');
  });
});
