// A BERT encoder run in-process on float32 weights: embeddings, then per layer multi-head
// self-attention and a feed-forward block, each followed by a residual LayerNorm. Far too
// slow to serve (the native runtime does, `encoder-graph.ts`), it is kept as the exact
// reference the runtime's results are checked against. XLM-RoBERTa is the same network
// with positions counted from after the padding id.

import type { Tensor } from './safetensors.js';

export interface BertConfig {
  hidden_size: number;
  num_attention_heads: number;
  num_hidden_layers: number;
  intermediate_size: number;
  max_position_embeddings: number;
  layer_norm_eps?: number;
  hidden_act?: string;
  architectures?: string[];
  model_type?: string;
  pad_token_id?: number;
}

/** Whether the config describes an XLM-RoBERTa model (the reference's test: type or architecture). */
export function isXlmRoberta(config: BertConfig): boolean {
  const t = (config.model_type ?? '').toLowerCase();
  const arch = (config.architectures ?? []).map((a) => a.toLowerCase());
  return t === 'xlm-roberta' || t === 'xlm_roberta' || arch.some((a) => a.includes('xlm-roberta') || a.includes('xlm_roberta') || a.includes('xlmroberta'));
}

/**
 * Position of the first token: BERT counts from 0; RoBERTa models from the padding id + 1
 * (their position table reserves the rows up to the padding id).
 */
export function firstPosition(config: BertConfig): number {
  return isXlmRoberta(config) ? (config.pad_token_id ?? 1) + 1 : 0;
}

/**
 * A weight by its BERT name (`encoder.layer.0.attention.self.query.weight`), whatever prefix
 * the checkpoint puts before them (`bert.`, `roberta.`...) and with the old `gamma`/`beta`
 * names of LayerNorm parameters.
 */
export function weightLookup(tensors: Map<string, Tensor>): (name: string) => Tensor {
  const anchor = [...tensors.keys()].find((k) => k.endsWith('embeddings.word_embeddings.weight'));
  const prefix = anchor ? anchor.slice(0, -'embeddings.word_embeddings.weight'.length) : '';
  return (name: string) => {
    const t = tensors.get(prefix + name) ?? tensors.get(prefix + name.replace(/LayerNorm\.weight$/, 'LayerNorm.gamma').replace(/LayerNorm\.bias$/, 'LayerNorm.beta'));
    if (!t) throw new Error(`model weights lack \`${prefix + name}\``);
    return t;
  };
}

function erf(x: number): number {
  // Abramowitz & Stegun 7.1.26: error below 1.5e-7, far under float32 noise here.
  const s = Math.sign(x);
  const a = Math.abs(x);
  const t = 1 / (1 + 0.3275911 * a);
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-a * a);
  return s * y;
}

export class Bert {
  private readonly w: (name: string) => Float32Array;
  private readonly eps: number;
  private readonly tanhGelu: boolean;

  constructor(
    readonly config: BertConfig,
    tensors: Map<string, Tensor>,
  ) {
    const lookup = weightLookup(tensors);
    this.w = (name: string) => lookup(name).data;
    this.eps = config.layer_norm_eps ?? 1e-12;
    this.tanhGelu = config.hidden_act === 'gelu_new' || config.hidden_act === 'gelu_pytorch_tanh';
    // Fail at load time rather than on the first document.
    for (let l = 0; l < config.num_hidden_layers; l++) this.w(`encoder.layer.${l}.output.LayerNorm.weight`);
    this.w('embeddings.word_embeddings.weight');
  }

  get dimensions(): number {
    return this.config.hidden_size;
  }

  private linear(x: Float32Array, rows: number, inDim: number, name: string, outDim: number): Float32Array {
    const W = this.w(`${name}.weight`);
    const b = this.w(`${name}.bias`);
    const y = new Float32Array(rows * outDim);
    for (let r = 0; r < rows; r++) {
      const xo = r * inDim;
      for (let o = 0; o < outDim; o++) {
        let s = b[o]!;
        const wo = o * inDim;
        for (let i = 0; i < inDim; i++) s += x[xo + i]! * W[wo + i]!;
        y[r * outDim + o] = s;
      }
    }
    return y;
  }

  private layerNorm(x: Float32Array, rows: number, name: string): void {
    const H = this.config.hidden_size;
    const g = this.w(`${name}.weight`);
    const b = this.w(`${name}.bias`);
    for (let r = 0; r < rows; r++) {
      const o = r * H;
      let mean = 0;
      for (let i = 0; i < H; i++) mean += x[o + i]!;
      mean /= H;
      let v = 0;
      for (let i = 0; i < H; i++) v += (x[o + i]! - mean) ** 2;
      const inv = 1 / Math.sqrt(v / H + this.eps);
      for (let i = 0; i < H; i++) x[o + i] = (x[o + i]! - mean) * inv * g[i]! + b[i]!;
    }
  }

  private gelu(v: number): number {
    if (this.tanhGelu) return 0.5 * v * (1 + Math.tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    return 0.5 * v * (1 + erf(v / Math.SQRT2));
  }

  /** The last hidden states of a token sequence: `ids.length` rows of `hidden_size`. */
  forward(ids: readonly number[]): Float32Array {
    const { hidden_size: H, num_attention_heads: nh, intermediate_size: I } = this.config;
    const L = ids.length;
    const hd = H / nh;
    const word = this.w('embeddings.word_embeddings.weight');
    const pos = this.w('embeddings.position_embeddings.weight');
    const type = this.w('embeddings.token_type_embeddings.weight');
    const p0 = firstPosition(this.config);
    let x: Float32Array = new Float32Array(L * H);
    for (let t = 0; t < L; t++) for (let i = 0; i < H; i++) x[t * H + i] = word[ids[t]! * H + i]! + pos[(p0 + t) * H + i]! + type[i]!;
    this.layerNorm(x, L, 'embeddings.LayerNorm');
    const scale = 1 / Math.sqrt(hd);
    for (let l = 0; l < this.config.num_hidden_layers; l++) {
      const p = `encoder.layer.${l}`;
      const q = this.linear(x, L, H, `${p}.attention.self.query`, H);
      const k = this.linear(x, L, H, `${p}.attention.self.key`, H);
      const v = this.linear(x, L, H, `${p}.attention.self.value`, H);
      const ctx = new Float32Array(L * H);
      const scores = new Float32Array(L);
      for (let h = 0; h < nh; h++) {
        for (let i = 0; i < L; i++) {
          let max = -Infinity;
          for (let j = 0; j < L; j++) {
            let s = 0;
            for (let d = 0; d < hd; d++) s += q[i * H + h * hd + d]! * k[j * H + h * hd + d]!;
            scores[j] = s * scale;
            if (scores[j]! > max) max = scores[j]!;
          }
          let sum = 0;
          for (let j = 0; j < L; j++) sum += scores[j] = Math.exp(scores[j]! - max);
          for (let j = 0; j < L; j++) {
            const pj = scores[j]! / sum;
            for (let d = 0; d < hd; d++) ctx[i * H + h * hd + d]! += pj * v[j * H + h * hd + d]!;
          }
        }
      }
      const attn = this.linear(ctx, L, H, `${p}.attention.output.dense`, H);
      for (let i = 0; i < attn.length; i++) attn[i]! += x[i]!;
      this.layerNorm(attn, L, `${p}.attention.output.LayerNorm`);
      const inter = this.linear(attn, L, H, `${p}.intermediate.dense`, I);
      for (let i = 0; i < inter.length; i++) inter[i] = this.gelu(inter[i]!);
      const out = this.linear(inter, L, I, `${p}.output.dense`, H);
      for (let i = 0; i < out.length; i++) out[i]! += attn[i]!;
      this.layerNorm(out, L, `${p}.output.LayerNorm`);
      x = out;
    }
    return x;
  }
}
