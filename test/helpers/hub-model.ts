// Generated BERT-family models with seeded random weights, written as the model hub lays
// them out (config.json, tokenizer.json, model.safetensors, 1_Pooling/config.json), for
// tests and benchmarks: no real model can be fetched here.

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeSafetensors, type Tensor } from '../../src/engine/vector/hub-model/safetensors.js';

export interface ModelShape {
  hidden: number;
  heads: number;
  layers: number;
  intermediate: number;
  /** Extra vocabulary words (`w0`, `w1`, ...) beyond the few fixed ones. */
  extraWords?: number;
  maxPositions?: number;
  pooling?: 'cls' | 'mean' | 'max' | 'meanSqrtLen' | 'lastToken';
  /** `gelu` (erf) by default. */
  activation?: string;
  xlmRoberta?: boolean;
  /** Weights under `bert.` (or `roberta.`), as some checkpoints name them. */
  prefixed?: boolean;
  seed?: number;
}

export const FIXED_VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', 'apple', 'pie', 'un', '##aff', '##able', 'red', 'car', ',', 'fast'];

/** Shapes of the reference's usual models (random weights). */
export const BGE_SMALL: ModelShape = { hidden: 384, heads: 12, layers: 12, intermediate: 1536, extraWords: 30_000, maxPositions: 512 };
export const BGE_BASE: ModelShape = { hidden: 768, heads: 12, layers: 12, intermediate: 3072, extraWords: 30_000, maxPositions: 512 };
export const TINY: ModelShape = { hidden: 8, heads: 2, layers: 1, intermediate: 16, maxPositions: 32 };

/** XLM-RoBERTa's pieces: SentencePiece marks a word start with `▁`. */
export const FIXED_PIECES = ['<s>', '<pad>', '</s>', '<unk>', '▁apple', '▁pie', '▁un', 'aff', 'able', '▁red', '▁car', ',', '▁fast', '▁'];

export function vocabOf(shape: ModelShape): string[] {
  const extra = Array.from({ length: shape.extraWords ?? 0 }, (_, i) => (shape.xlmRoberta ? `▁w${i}` : `w${i}`));
  return [...(shape.xlmRoberta ? FIXED_PIECES : FIXED_VOCAB), ...extra];
}

/** A SentencePiece Unigram tokenizer as XLM-RoBERTa models ship it (without the precompiled normalizer). */
function unigramTokenizer(vocab: string[]): unknown {
  const special = (content: string, id: number) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  return {
    added_tokens: ['<s>', '<pad>', '</s>', '<unk>'].map(special),
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Lowercase' }, { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }] },
    pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
      pair: [],
      special_tokens: { '<s>': { id: '<s>', ids: [0], tokens: ['<s>'] }, '</s>': { id: '</s>', ids: [2], tokens: ['</s>'] } },
    },
    decoder: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
    model: { type: 'Unigram', unk_id: 3, vocab: vocab.map((p, i) => [p, i < 4 ? 0 : -1 - p.length / 10]) },
  };
}

/** The model's files, by their path in the model's repository. */
export function modelFiles(shape: ModelShape): Map<string, Buffer> {
  const { hidden: H, intermediate: I, layers } = shape;
  const vocab = vocabOf(shape);
  const maxPositions = shape.maxPositions ?? 32;
  let s = shape.seed ?? 12345;
  const rnd = () => ((s = (s * 1103515245 + 12345) >>> 0) / 4294967296 - 0.5) * 0.5;
  const t = (dims: number[], fill?: number): Tensor => {
    const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
    for (let i = 0; i < data.length; i++) data[i] = fill ?? rnd();
    return { shape: dims, data };
  };
  const prefix = shape.prefixed ? (shape.xlmRoberta ? 'roberta.' : 'bert.') : '';
  const positions = maxPositions + (shape.xlmRoberta ? 2 : 0);
  const tensors: Record<string, Tensor> = {
    'embeddings.word_embeddings.weight': t([vocab.length, H]),
    'embeddings.position_embeddings.weight': t([positions, H]),
    'embeddings.token_type_embeddings.weight': t([shape.xlmRoberta ? 1 : 2, H]),
    'embeddings.LayerNorm.weight': t([H], 1),
    'embeddings.LayerNorm.bias': t([H], 0),
  };
  for (let l = 0; l < layers; l++) {
    const p = `encoder.layer.${l}`;
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
  }
  const config = {
    architectures: [shape.xlmRoberta ? 'XLMRobertaModel' : 'BertModel'],
    model_type: shape.xlmRoberta ? 'xlm-roberta' : 'bert',
    hidden_size: H,
    num_attention_heads: shape.heads,
    num_hidden_layers: layers,
    intermediate_size: I,
    max_position_embeddings: positions,
    hidden_act: shape.activation ?? 'gelu',
    layer_norm_eps: 1e-12,
    pad_token_id: shape.xlmRoberta ? 1 : 0,
    vocab_size: vocab.length,
  };
  const tokenizer = shape.xlmRoberta
    ? unigramTokenizer(vocab)
    : {
        normalizer: { type: 'BertNormalizer', lowercase: true },
        model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', vocab: Object.fromEntries(vocab.map((w, i) => [w, i])) },
      };
  const pooling = shape.pooling ?? 'mean';
  const poolingConfig = {
    pooling_mode_cls_token: pooling === 'cls',
    pooling_mode_mean_tokens: pooling === 'mean',
    pooling_mode_max_tokens: pooling === 'max',
    pooling_mode_mean_sqrt_len_tokens: pooling === 'meanSqrtLen',
    pooling_mode_lasttoken: pooling === 'lastToken',
  };
  const named = Object.fromEntries(Object.entries(tensors).map(([k, v]) => [prefix + k, v]));
  return new Map([
    ['config.json', Buffer.from(JSON.stringify(config))],
    ['tokenizer.json', Buffer.from(JSON.stringify(tokenizer))],
    ['model.safetensors', writeSafetensors(named)],
    ['1_Pooling/config.json', Buffer.from(JSON.stringify(poolingConfig))],
  ]);
}

/** Writes a generated model into `dir`. */
export function writeModel(dir: string, shape: ModelShape): void {
  for (const [path, bytes] of modelFiles(shape)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), bytes);
  }
}

/** A text of `tokens` tokens ([CLS] and [SEP] included) in the vocabulary of `shape`. */
export function textOfTokens(shape: ModelShape, tokens: number, seed: number): string {
  const n = shape.extraWords ?? 0;
  const words: string[] = [];
  for (let i = 0; i < tokens - 2; i++) words.push(n > 0 ? `w${(seed * 7919 + i * 104729) % n}` : ['apple', 'pie', 'red', 'car', 'fast'][(seed + i) % 5]!);
  return words.join(' ');
}
