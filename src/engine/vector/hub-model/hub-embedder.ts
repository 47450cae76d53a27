// The `hubModel` source: a BERT-family model run in-process from files on this machine
// (`config.json`, `tokenizer.json`, `model.safetensors`, and optionally the
// sentence-transformers pooling config). Nothing is downloaded: the model must already be
// in the models directory.

import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { EmbedError } from '../embed-error.js';
import type { TextEmbedder } from '../embedders.js';
import { Bert, type BertConfig } from './bert.js';
import { readSafetensors } from './safetensors.js';
import { WordPiece } from './wordpiece.js';

export const DEFAULT_HUB_MODEL = 'BAAI/bge-base-en-v1.5';

/** Where models are looked up: `TRINE_HUB_MODELS_DIR`, else `./models`. */
export function hubModelsDir(): string {
  return process.env['TRINE_HUB_MODELS_DIR'] ?? join(process.cwd(), 'models');
}

type Pooling = 'mean' | 'cls';

interface Loaded {
  bert: Bert;
  tokenizer: WordPiece;
  pooling: Pooling;
}

function modelDir(model: string, revision: string | undefined): string {
  const base = isAbsolute(model) ? model : join(hubModelsDir(), model);
  const withRevision = revision ? join(base, revision) : base;
  return revision && existsSync(withRevision) ? withRevision : base;
}

/** `useModel` follows the model's own pooling config; without one, mean pooling. */
function poolingOf(dir: string, setting: string | undefined): Pooling {
  if (setting === 'forceCls') return 'cls';
  if (setting === 'forceMean') return 'mean';
  const path = join(dir, '1_Pooling', 'config.json');
  if (!existsSync(path)) return 'mean';
  const cfg = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  return cfg['pooling_mode_cls_token'] === true ? 'cls' : 'mean';
}

function load(model: string, revision: string | undefined, pooling: string | undefined): Loaded {
  const dir = modelDir(model, revision);
  for (const f of ['config.json', 'tokenizer.json', 'model.safetensors']) {
    if (!existsSync(join(dir, f))) {
      throw new EmbedError(
        'user',
        `model \`${model}\` is not available locally: \`${join(dir, f)}\` is missing\n  - Note: models are never downloaded at run time; place \`config.json\`, \`tokenizer.json\` and \`model.safetensors\` in \`${dir}\``,
      );
    }
  }
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as BertConfig;
  const arch = config.architectures ?? [];
  if (arch.length > 0 && !arch.some((a) => a.startsWith('Bert'))) {
    throw new EmbedError('user', `model \`${model}\` appears to be unsupported\n  - Note: model has declared architectures \`${JSON.stringify(arch)}\`, only models with architecture \`"BertModel"\` are supported.`);
  }
  try {
    const tokenizer = new WordPiece(JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')));
    const bert = new Bert(config, readSafetensors(readFileSync(join(dir, 'model.safetensors'))));
    return { bert, tokenizer, pooling: poolingOf(dir, pooling) };
  } catch (e) {
    throw new EmbedError('runtime', `could not load model \`${model}\`:\n  - ${(e as Error).message}`);
  }
}

export function hubModelEmbedder(c: Record<string, unknown>): TextEmbedder {
  const model = typeof c['model'] === 'string' ? c['model'] : DEFAULT_HUB_MODEL;
  const revision = typeof c['revision'] === 'string' ? c['revision'] : undefined;
  const pooling = typeof c['pooling'] === 'string' ? c['pooling'] : undefined;
  let loaded: Loaded | null = null;
  const get = () => (loaded ??= load(model, revision, pooling));
  return {
    get dimensions() {
      return loaded?.bert.dimensions ?? (typeof c['dimensions'] === 'number' ? c['dimensions'] : undefined);
    },
    async embed(texts) {
      const m = get();
      const out: Float32Array[] = [];
      for (const text of texts) {
        const ids = m.tokenizer.encode(text, m.bert.config.max_position_embeddings);
        const h = m.bert.forward(ids);
        const H = m.bert.dimensions;
        const v = new Float32Array(H);
        if (m.pooling === 'cls') v.set(h.subarray(0, H));
        else {
          for (let t = 0; t < ids.length; t++) for (let i = 0; i < H; i++) v[i]! += h[t * H + i]!;
          for (let i = 0; i < H; i++) v[i]! /= ids.length;
        }
        out.push(v);
        // A real model takes a while per text: let heartbeats and searches through.
        await new Promise((r) => setImmediate(r));
      }
      return out;
    },
  };
}
