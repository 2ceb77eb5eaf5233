/** A tiny protobuf writer for building SentencePiece models (and broken ones) in tests. */

export function varint(n: number | bigint): number[] {
  let v = BigInt.asUintN(64, BigInt(n));
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) b |= 0x80;
    out.push(b);
  } while (v !== 0n);
  return out;
}

export function field(no: number, wire: number): number[] {
  return varint((no << 3) | wire);
}

export function lengthDelimited(no: number, body: ArrayLike<number>): number[] {
  return [...field(no, 2), ...varint(body.length), ...Array.from(body)];
}

export function text(no: number, value: string): number[] {
  return lengthDelimited(no, new TextEncoder().encode(value));
}

export function int(no: number, value: number): number[] {
  return [...field(no, 0), ...varint(value)];
}

export function float(no: number, value: number): number[] {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setFloat32(0, value, true);
  return [...field(no, 5), ...b];
}

/** A ModelProto.SentencePiece (piece, score, type). */
export function piece(value: string, score: number, type = 1): number[] {
  return lengthDelimited(1, [...text(1, value), ...float(2, score), ...int(3, type)]);
}

export interface TinyModelOptions {
  modelType?: number;
  byteFallback?: boolean;
  pieces?: Array<[string, number, number]>;
  normalizer?: number[];
}

/** A small valid Unigram model: <unk>, <s>, </s>, then a few pieces (override any part). */
export function tinyModel(o: TinyModelOptions = {}): Uint8Array {
  const pieces = o.pieces ?? [
    ["<unk>", 0, 2],
    ["<s>", 0, 3],
    ["</s>", 0, 3],
    ["\u2581", -1, 1],
    ["a", -2, 1],
    ["b", -2, 1],
    ["ab", -1.5, 1],
  ];
  const trainer = [...int(3, o.modelType ?? 1), ...(o.byteFallback === true ? int(35, 1) : [])];
  return Uint8Array.from([
    ...pieces.flatMap(([p, s, t]) => piece(p, s, t)),
    ...lengthDelimited(2, trainer),
    ...lengthDelimited(3, o.normalizer ?? [...text(1, "identity")]),
  ]);
}
