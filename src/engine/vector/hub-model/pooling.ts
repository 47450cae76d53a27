// How a model's per-token hidden states become one vector: the sentence-transformers
// pooling modes the reference reads from `1_Pooling/config.json`, overridden by the
// embedder's `pooling` setting (`forceMean`, `forceCls`; `useModel` keeps the model's).

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type Pooling = 'mean' | 'cls' | 'max' | 'meanSqrtLen' | 'lastToken';

interface PoolingConfig {
  pooling_mode_cls_token?: boolean;
  pooling_mode_mean_tokens?: boolean;
  pooling_mode_max_tokens?: boolean;
  pooling_mode_mean_sqrt_len_tokens?: boolean;
  pooling_mode_lasttoken?: boolean;
}

/** The pooling of the model in `dir` under the embedder's setting; mean without a pooling config. */
export function poolingOf(dir: string, setting: string | undefined): Pooling {
  if (setting === 'forceCls') return 'cls';
  if (setting === 'forceMean') return 'mean';
  const path = join(dir, '1_Pooling', 'config.json');
  if (!existsSync(path)) return 'mean';
  let cfg: PoolingConfig;
  try {
    cfg = JSON.parse(readFileSync(path, 'utf8')) as PoolingConfig;
  } catch (e) {
    throw new Error(`could not deserialize file at \`${path}\` as a pooling config: ${(e as Error).message}`);
  }
  // The reference's order of precedence when a config sets several.
  if (cfg.pooling_mode_cls_token) return 'cls';
  if (cfg.pooling_mode_mean_tokens) return 'mean';
  if (cfg.pooling_mode_lasttoken) return 'lastToken';
  if (cfg.pooling_mode_mean_sqrt_len_tokens) return 'meanSqrtLen';
  if (cfg.pooling_mode_max_tokens) return 'max';
  return 'mean';
}

/** Pools the `len` rows of width `width` that start at row `first` of `hidden`. */
export function pool(hidden: Float32Array, first: number, len: number, width: number, mode: Pooling): Float32Array {
  const row = (t: number) => hidden.subarray((first + t) * width, (first + t + 1) * width);
  if (mode === 'cls') return row(0).slice();
  if (mode === 'lastToken') return row(len - 1).slice();
  const v = mode === 'max' ? row(0).slice() : new Float32Array(width);
  for (let t = mode === 'max' ? 1 : 0; t < len; t++) {
    const r = row(t);
    if (mode === 'max') for (let i = 0; i < width; i++) v[i] = Math.max(v[i]!, r[i]!);
    else for (let i = 0; i < width; i++) v[i]! += r[i]!;
  }
  const div = mode === 'mean' ? len : mode === 'meanSqrtLen' ? Math.sqrt(len) : 1;
  if (div !== 1) for (let i = 0; i < width; i++) v[i]! /= div;
  return v;
}
