// Writes an ONNX model (the `ModelProto` protobuf) from a small description: nodes,
// initializers, inputs and outputs. Only what the encoder graphs need is covered; field
// numbers are those of onnx.proto.

import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';

export type Attr = { f: number } | { i: number } | { ints: number[] };

export interface OnnxNode {
  op: string;
  inputs: string[];
  outputs: string[];
  /** `com.microsoft` for onnxruntime's fused operators; the standard domain otherwise. */
  domain?: string;
  attrs?: Record<string, Attr>;
}

export interface OnnxInitializer {
  name: string;
  dims: number[];
  data: Float32Array | BigInt64Array;
}

export interface OnnxValue {
  name: string;
  type: 'float' | 'int64';
  /** A number is a fixed size, a string a named dynamic one. */
  shape: (number | string)[];
}

export interface OnnxGraph {
  nodes: OnnxNode[];
  initializers: OnnxInitializer[];
  inputs: OnnxValue[];
  outputs: OnnxValue[];
}

const FLOAT = 1;
const INT64 = 7;
const ATTR_FLOAT = 1;
const ATTR_INT = 2;
const ATTR_INTS = 7;

function message(w: BinaryWriter, field: number, body: (w: BinaryWriter) => void): void {
  w.tag(field, WireType.LengthDelimited).fork();
  body(w);
  w.join();
}

function attribute(w: BinaryWriter, name: string, a: Attr): void {
  message(w, 5, (w) => {
    w.tag(1, WireType.LengthDelimited).string(name);
    if ('f' in a) w.tag(2, WireType.Bit32).float(a.f).tag(20, WireType.Varint).int32(ATTR_FLOAT);
    else if ('i' in a) w.tag(3, WireType.Varint).int64(a.i).tag(20, WireType.Varint).int32(ATTR_INT);
    else {
      for (const v of a.ints) w.tag(8, WireType.Varint).int64(v);
      w.tag(20, WireType.Varint).int32(ATTR_INTS);
    }
  });
}

function valueInfo(w: BinaryWriter, field: number, v: OnnxValue): void {
  message(w, field, (w) => {
    w.tag(1, WireType.LengthDelimited).string(v.name);
    message(w, 2, (w) =>
      message(w, 1, (w) => {
        w.tag(1, WireType.Varint).int32(v.type === 'float' ? FLOAT : INT64);
        message(w, 2, (w) => {
          for (const d of v.shape) message(w, 1, (w) => (typeof d === 'number' ? w.tag(1, WireType.Varint).int64(d) : w.tag(2, WireType.LengthDelimited).string(d)));
        });
      }),
    );
  });
}

/** The serialized model, opset 17 plus onnxruntime's `com.microsoft` operators. */
export function writeOnnx(g: OnnxGraph): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, WireType.Varint).int64(8); // ir_version
  w.tag(2, WireType.LengthDelimited).string('trine');
  for (const [domain, version] of [['', 17], ['com.microsoft', 1]] as const) {
    message(w, 8, (w) => w.tag(1, WireType.LengthDelimited).string(domain).tag(2, WireType.Varint).int64(version));
  }
  message(w, 7, (w) => {
    g.nodes.forEach((n, k) =>
      message(w, 1, (w) => {
        for (const i of n.inputs) w.tag(1, WireType.LengthDelimited).string(i);
        for (const o of n.outputs) w.tag(2, WireType.LengthDelimited).string(o);
        w.tag(3, WireType.LengthDelimited).string(`${n.op}_${k}`);
        w.tag(4, WireType.LengthDelimited).string(n.op);
        for (const [name, a] of Object.entries(n.attrs ?? {})) attribute(w, name, a);
        if (n.domain) w.tag(7, WireType.LengthDelimited).string(n.domain);
      }),
    );
    w.tag(2, WireType.LengthDelimited).string('encoder');
    for (const t of g.initializers) {
      message(w, 5, (w) => {
        for (const d of t.dims) w.tag(1, WireType.Varint).int64(d);
        w.tag(2, WireType.Varint).int32(t.data instanceof Float32Array ? FLOAT : INT64);
        w.tag(8, WireType.LengthDelimited).string(t.name);
        // raw_data is little-endian, as typed arrays are on every platform Node runs on here.
        w.tag(9, WireType.LengthDelimited).bytes(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
      });
    }
    for (const v of g.inputs) valueInfo(w, 11, v);
    for (const v of g.outputs) valueInfo(w, 12, v);
  });
  return w.finish();
}
