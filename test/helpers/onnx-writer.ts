// A minimal ONNX protobuf writer, enough to build small test models without a Python toolchain:
// ModelProto → GraphProto with nodes, float/int64 initializers, typed inputs and outputs.
// Field numbers follow onnx/onnx.proto3.

const WIRE_VARINT = 0;
const WIRE_BYTES = 2;
const WIRE_FIXED32 = 5;

/** Protobuf encoding of one message: fields appended in order. */
class Message {
  private readonly parts: Uint8Array[] = [];

  varint(field: number, value: number | bigint): this {
    this.parts.push(key(field, WIRE_VARINT), varint(BigInt(value)));
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.parts.push(key(field, WIRE_BYTES), varint(BigInt(value.length)), value);
    return this;
  }

  /** Wire type 5: four little-endian bytes, no length prefix. */
  float(field: number, value: number): this {
    this.parts.push(key(field, WIRE_FIXED32), new Uint8Array(new Float32Array([value]).buffer));
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  message(field: number, value: Message): this {
    return this.bytes(field, value.encode());
  }

  encode(): Uint8Array {
    const out = new Uint8Array(this.parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

const key = (field: number, wire: number): Uint8Array => varint(BigInt((field << 3) | wire));

function varint(value: bigint): Uint8Array {
  // Negative int64 values are encoded as their 64-bit two's complement (ten bytes).
  let v = value < 0n ? value + (1n << 64n) : value;
  const out: number[] = [];
  do {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v > 0n ? byte | 0x80 : byte);
  } while (v > 0n);
  return Uint8Array.from(out);
}

/** ONNX TensorProto.DataType values used here. */
export const DataType = { FLOAT: 1, INT64: 7 } as const;
type DataTypeValue = (typeof DataType)[keyof typeof DataType];

export interface Initializer {
  name: string;
  dims: number[];
  /** Float32Array for FLOAT, BigInt64Array for INT64. */
  data: Float32Array | BigInt64Array;
}

export interface ValueInfo {
  name: string;
  type: DataTypeValue;
  /** A number is a fixed size, a string a symbolic one (e.g. "batch"). */
  shape: (number | string)[];
}

export type Attribute =
  | { name: string; int: number }
  | { name: string; ints: number[] }
  | { name: string; float: number };

export interface Node {
  op: string;
  inputs: string[];
  outputs: string[];
  name?: string;
  attributes?: Attribute[];
}

export interface Graph {
  name: string;
  nodes: Node[];
  initializers: Initializer[];
  inputs: ValueInfo[];
  outputs: ValueInfo[];
}

/** Serializes a model with one graph for the default ("ai.onnx") domain at `opset`. */
export function encodeModel(graph: Graph, opset = 13): Uint8Array {
  const g = new Message();
  for (const node of graph.nodes) g.message(1, encodeNode(node));
  g.string(2, graph.name);
  for (const init of graph.initializers) g.message(5, encodeTensor(init));
  for (const input of graph.inputs) g.message(11, encodeValueInfo(input));
  for (const output of graph.outputs) g.message(12, encodeValueInfo(output));
  return new Message()
    .varint(1, 7) // ir_version 7 (ONNX 1.8), enough for opset 13
    .string(2, "afs-test")
    .message(7, g)
    .message(8, new Message().string(1, "").varint(2, opset))
    .encode();
}

function encodeNode(node: Node): Message {
  const m = new Message();
  for (const input of node.inputs) m.string(1, input);
  for (const output of node.outputs) m.string(2, output);
  m.string(3, node.name ?? `${node.op}_${node.outputs[0]}`);
  m.string(4, node.op);
  for (const attribute of node.attributes ?? []) m.message(5, encodeAttribute(attribute));
  return m;
}

// AttributeProto.AttributeType: FLOAT = 1, INT = 2, INTS = 7.
function encodeAttribute(a: Attribute): Message {
  const m = new Message().string(1, a.name);
  if ("int" in a) return m.varint(3, a.int).varint(20, 2);
  if ("float" in a) return m.float(2, a.float).varint(20, 1);
  for (const i of a.ints) m.varint(8, i);
  return m.varint(20, 7);
}

function encodeTensor(init: Initializer): Message {
  const m = new Message();
  for (const d of init.dims) m.varint(1, d);
  m.varint(2, init.data instanceof Float32Array ? DataType.FLOAT : DataType.INT64);
  m.string(8, init.name);
  // raw_data is little-endian, which is what typed arrays hold on every platform Node runs on.
  m.bytes(9, new Uint8Array(init.data.buffer, init.data.byteOffset, init.data.byteLength));
  return m;
}

function encodeValueInfo(info: ValueInfo): Message {
  const shape = new Message();
  for (const d of info.shape) {
    shape.message(1, typeof d === "number" ? new Message().varint(1, d) : new Message().string(2, d));
  }
  const tensorType = new Message().varint(1, info.type).message(2, shape);
  return new Message().string(1, info.name).message(2, new Message().message(1, tensorType));
}
