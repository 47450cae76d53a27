// The BERT-family encoder as an ONNX graph, built from the checkpoint's safetensors weights,
// for onnxruntime to run. Same network as `bert.ts`, on a batch of padded sequences:
// embeddings and LayerNorm, then per layer onnxruntime's fused CPU operators (`Attention`
// with the padding mask, `SkipLayerNormalization` for residual + bias + LayerNorm,
// `BiasGelu`/`FastGelu`), whose kernels are vectorized and multithreaded.
//
// Inputs `input_ids` and `attention_mask` (int64, batch x sequence, padding on the right);
// output `last_hidden_state` (float, batch x sequence x hidden).

import { firstPosition, weightLookup, type BertConfig } from './bert.js';
import type { OnnxGraph, OnnxInitializer, OnnxNode } from './onnx-writer.js';
import type { Tensor } from './safetensors.js';

const MS = 'com.microsoft';
const INT32 = 6;

/** `w` ([out, in], as checkpoints store linear layers) transposed to [in, out] for MatMul. */
function transposed(w: Tensor): Float32Array {
  const [rows, cols] = w.shape as [number, number];
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = w.data[r * cols + c]!;
  return out;
}

export function encoderGraph(config: BertConfig, tensors: Map<string, Tensor>): OnnxGraph {
  const { hidden_size: H, num_attention_heads: heads, intermediate_size: I } = config;
  if (!Number.isInteger(H / heads)) throw new Error(`hidden_size ${H} is not a multiple of num_attention_heads ${heads}`);
  const eps = config.layer_norm_eps ?? 1e-12;
  const tanhGelu = config.hidden_act === 'gelu_new' || config.hidden_act === 'gelu_pytorch_tanh';
  if (config.hidden_act !== undefined && config.hidden_act !== 'gelu' && !tanhGelu) {
    throw new Error(`unsupported activation \`${config.hidden_act}\` (supported: \`gelu\`, \`gelu_new\`, \`gelu_pytorch_tanh\`)`);
  }
  const w = weightLookup(tensors);
  const nodes: OnnxNode[] = [];
  const initializers: OnnxInitializer[] = [];
  const init = (name: string, dims: number[], data: Float32Array | BigInt64Array) => {
    initializers.push({ name, dims, data });
    return name;
  };
  const weight = (name: string) => {
    const t = w(name);
    return init(name, t.shape, t.data);
  };
  const node = (op: string, inputs: string[], output: string, extra: Partial<OnnxNode> = {}) => {
    nodes.push({ op, inputs, outputs: [output], ...extra });
    return output;
  };

  // Positions from the mask: the k-th real token of a row is at first + k (padding, on the
  // right, gets positions past the end of the row that the mask hides anyway).
  const counted = node('CumSum', ['attention_mask', init('axis1', [], BigInt64Array.of(1n))], 'counted');
  const positions = node('Add', [counted, init('position_base', [], BigInt64Array.of(BigInt(firstPosition(config) - 1)))], 'positions');
  const typeTable = w('embeddings.token_type_embeddings.weight');
  const summed = node(
    'Add',
    [
      node('Add', [node('Gather', [weight('embeddings.word_embeddings.weight'), 'input_ids'], 'words'), node('Gather', [weight('embeddings.position_embeddings.weight'), positions], 'places')], 'words_places'),
      // Every token is of type 0.
      init('token_type_0', [H], typeTable.data.slice(0, H)),
    ],
    'embedded',
  );
  let x = node('LayerNormalization', [summed, weight('embeddings.LayerNorm.weight'), weight('embeddings.LayerNorm.bias')], 'embedded_norm', { attrs: { axis: { i: -1 }, epsilon: { f: eps } } });
  const mask = node('Cast', ['attention_mask'], 'mask32', { attrs: { to: { i: INT32 } } });

  for (let l = 0; l < config.num_hidden_layers; l++) {
    const p = `encoder.layer.${l}`;
    const q = w(`${p}.attention.self.query.weight`);
    const k = w(`${p}.attention.self.key.weight`);
    const v = w(`${p}.attention.self.value.weight`);
    // Attention wants the three projections side by side: [H, 3H], and their biases [3H].
    const qkv = new Float32Array(H * 3 * H);
    [q, k, v].forEach((m, j) => {
      const t = transposed(m);
      for (let r = 0; r < H; r++) qkv.set(t.subarray(r * H, (r + 1) * H), r * 3 * H + j * H);
    });
    const qkvBias = new Float32Array(3 * H);
    ['query', 'key', 'value'].forEach((n, j) => qkvBias.set(w(`${p}.attention.self.${n}.bias`).data, j * H));
    const attended = node('Attention', [x, init(`${p}.qkv`, [H, 3 * H], qkv), init(`${p}.qkv_bias`, [3 * H], qkvBias), mask], `${p}.attended`, {
      domain: MS,
      attrs: { num_heads: { i: heads } },
    });
    const linear = (input: string, name: string, inDim: number, outDim: number) => node('MatMul', [input, init(`${name}.weight_t`, [inDim, outDim], transposed(w(`${name}.weight`)))], `${name}.out`);
    const projected = linear(attended, `${p}.attention.output.dense`, H, H);
    const h = node(
      'SkipLayerNormalization',
      [projected, x, weight(`${p}.attention.output.LayerNorm.weight`), weight(`${p}.attention.output.LayerNorm.bias`), weight(`${p}.attention.output.dense.bias`)],
      `${p}.attention_out`,
      { domain: MS, attrs: { epsilon: { f: eps } } },
    );
    const inter = node(tanhGelu ? 'FastGelu' : 'BiasGelu', [linear(h, `${p}.intermediate.dense`, H, I), weight(`${p}.intermediate.dense.bias`)], `${p}.intermediate`, { domain: MS });
    x = node(
      'SkipLayerNormalization',
      [linear(inter, `${p}.output.dense`, I, H), h, weight(`${p}.output.LayerNorm.weight`), weight(`${p}.output.LayerNorm.bias`), weight(`${p}.output.dense.bias`)],
      l === config.num_hidden_layers - 1 ? 'last_hidden_state' : `${p}.out`,
      { domain: MS, attrs: { epsilon: { f: eps } } },
    );
  }
  return {
    nodes,
    initializers,
    inputs: [
      { name: 'input_ids', type: 'int64', shape: ['batch', 'sequence'] },
      { name: 'attention_mask', type: 'int64', shape: ['batch', 'sequence'] },
    ],
    outputs: [{ name: x, type: 'float', shape: ['batch', 'sequence', H] }],
  };
}
