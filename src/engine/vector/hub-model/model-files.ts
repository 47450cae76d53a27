// Reads a model directory laid out as on the model hub (`config.json`, `tokenizer.json`,
// `model.safetensors`, optionally `1_Pooling/config.json`) and checks that Trine can run
// it, with the reference's wording when it cannot.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer as HubTokenizer } from '@huggingface/tokenizers';
import { EmbedError } from '../embed-error.js';
import { firstPosition, isXlmRoberta, type BertConfig } from './bert.js';
import { poolingOf, type Pooling } from './pooling.js';
import { readSafetensors, type Tensor } from './safetensors.js';
import { WordPiece } from './wordpiece.js';

/** The files a model needs; the pooling config is optional. */
export const MODEL_FILES = ['config.json', 'tokenizer.json', 'model.safetensors'] as const;
export const POOLING_FILE = '1_Pooling/config.json';

export interface Tokenizer {
  /** Token ids, special tokens included, at most `maxLength` of them. */
  encode(text: string, maxLength: number): number[];
}

/**
 * The tokenizer a `tokenizer.json` describes: BERT's WordPiece by this project's own code;
 * the others (XLM-RoBERTa's SentencePiece Unigram, BPE) through the tokenizers library,
 * which follows the file's normalizer, pre-tokenizer and special-token template. Like the
 * reference, a sequence longer than the model allows is cut at its limit.
 */
export function tokenizerFor(json: { model?: { type?: string } }): Tokenizer {
  const type = json.model?.type;
  if (type === undefined || type === 'WordPiece') return new WordPiece(json as ConstructorParameters<typeof WordPiece>[0]);
  const tok = new HubTokenizer(json, {});
  return { encode: (text, maxLength) => tok.encode(text).ids.slice(0, maxLength) };
}

/** The reference falls back to `pytorch_model.bin`; Trine cannot read PyTorch's format. */
export function pytorchOnly(model: string): EmbedError {
  return new EmbedError('user', `model \`${model}\` only ships PyTorch weights (\`pytorch_model.bin\`)\n  - Note: Trine reads weights in the safetensors format (\`model.safetensors\`); pick a revision or a model that has them`);
}

export interface ModelParts {
  config: BertConfig;
  tokenizer: Tokenizer;
  tensors: Map<string, Tensor>;
  pooling: Pooling;
  /** Longest token sequence the position table allows. */
  maxTokens: number;
}

function isSupported(config: BertConfig): boolean {
  const arch = config.architectures ?? [];
  const type = config.model_type ?? 'bert';
  return isXlmRoberta(config) || (arch.length === 0 ? type === 'bert' : arch.some((a) => a.startsWith('Bert')));
}

/** The parsed config, or the reference's "appears to be unsupported" user error. */
export function readConfig(dir: string, model: string): BertConfig {
  let config: BertConfig;
  try {
    config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as BertConfig;
  } catch (e) {
    throw new EmbedError('runtime', `for model '${model}', could not deserialize config at ${join(dir, 'config.json')} as JSON: ${(e as Error).message}`);
  }
  if (!isSupported(config)) {
    const arch = config.architectures ?? [];
    throw new EmbedError(
      'user',
      `model \`${model}\` appears to be unsupported\n  - Note: ${arch.length > 0 ? `model has declared architectures \`${JSON.stringify(arch)}\`, only` : 'only'} models with architecture \`"BertModel"\` or \`"XLMRobertaModel"\` are supported.`,
    );
  }
  return config;
}

export function readModel(dir: string, model: string, poolingSetting: string | undefined): ModelParts {
  for (const f of MODEL_FILES) {
    if (existsSync(join(dir, f))) continue;
    if (f === 'model.safetensors' && existsSync(join(dir, 'pytorch_model.bin'))) throw pytorchOnly(model);
    throw new EmbedError('runtime', `model \`${model}\` is incomplete: \`${join(dir, f)}\` is missing`);
  }
  const config = readConfig(dir, model);
  try {
    const tokenizer = tokenizerFor(JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')));
    const tensors = readSafetensors(readFileSync(join(dir, 'model.safetensors')));
    return { config, tokenizer, tensors, pooling: poolingOf(dir, poolingSetting), maxTokens: config.max_position_embeddings - firstPosition(config) };
  } catch (e) {
    throw new EmbedError('runtime', `could not load model \`${model}\`:\n  - ${(e as Error).message}`);
  }
}
