// The embedding provider seam of semantic search: texts in, unit-length vectors out. file_query
// stores vectors per (provider id, passage hash) and ranks by dot product, whichever provider made
// them.

export type EmbedKind = "document" | "query";

export interface EmbedOptions {
  /** Cancels the call: pending requests or batches stop with the signal's reason. */
  signal?: AbortSignal;
}

export interface EmbeddingProvider {
  /**
   * Names the vector space, e.g. "openai:text-embedding-3-small" or
   * "onnx:all-MiniLM-L6-v2@3f2a9c1e04b7". Vectors from different ids are never compared, so the id
   * changes whenever the model does.
   */
  readonly id: string;
  /** Vector length: known up front when the model says so, otherwise after the first embed call. */
  readonly dimensions: number | undefined;
  /**
   * A good number of texts per embed call (e.g. for progress bars). embed takes any number and
   * batches internally; this is only a hint.
   */
  readonly batchSize: number;
  /**
   * One vector per text, in order, each of length 1 (so cosine similarity is the dot product).
   * `kind` says whether texts are stored passages or a search query; asymmetric models treat them
   * differently.
   */
  embed(texts: readonly string[], kind: EmbedKind, options?: EmbedOptions): Promise<Float32Array[]>;
  /** Frees what the provider holds (an ONNX session); a later embed call opens it again. */
  close(): Promise<void>;
}

/** Scales `v` to length 1 in place and returns it; a zero vector stays zero. */
export function normalize(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += (v[i] as number) ** 2;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / norm;
  return v;
}

/** Dot product; for the unit vectors providers return, this is the cosine similarity. */
export function dot(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new RangeError(`vectors of different lengths (${a.length} and ${b.length})`);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}

/** Cosine similarity of any two vectors (0 when either is zero). */
export function cosine(a: Float32Array, b: Float32Array): number {
  const na = Math.sqrt(dot(a, a));
  const nb = Math.sqrt(dot(b, b));
  return na === 0 || nb === 0 ? 0 : dot(a, b) / (na * nb);
}

/** Little-endian bytes of a vector, for storing in a BLOB column. */
export function vectorToBytes(v: Float32Array): Uint8Array {
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}

/** The inverse of vectorToBytes; copies, so the result is aligned and owns its memory. */
export function vectorFromBytes(bytes: Uint8Array): Float32Array {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}

/**
 * Splits `items` into consecutive batches of at most `maxItems` items and (when `weight` is given)
 * at most `maxWeight` total weight; an item heavier than the cap gets a batch of its own.
 */
export function batches<T>(
  items: readonly T[],
  maxItems: number,
  maxWeight = Number.POSITIVE_INFINITY,
  weight: (item: T) => number = () => 0,
): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let load = 0;
  for (const item of items) {
    const w = weight(item);
    if (current.length > 0 && (current.length >= maxItems || load + w > maxWeight)) {
      out.push(current);
      current = [];
      load = 0;
    }
    current.push(item);
    load += w;
  }
  if (current.length > 0) out.push(current);
  return out;
}
