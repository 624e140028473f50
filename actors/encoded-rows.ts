/** Size of each chunk of a batch's encoded rows: large enough that few batches need more than a handful. */
const CHUNK_BYTES = 1024 * 1024;

/**
 * A batch of rows encoded as text lines, kept as bytes outside the JavaScript heap. Each
 * row's string is written out as soon as it is encoded and can die young; as strings,
 * a batch of 20,000 rows (about 8 MB) survived every young-generation collection until
 * its insert was done, and was copied again to join the lines.
 */
export class EncodedRows {
  private readonly chunks: Buffer[] = [];
  private chunk: Buffer | null = null;
  private used = 0;
  private bytesBefore = 0;
  rows = 0;

  push(line: string): void {
    const n = Buffer.byteLength(line);
    if (this.chunk === null || this.used + n + 1 > this.chunk.length) this.grow(n + 1);
    const c = this.chunk!;
    this.used += c.write(line, this.used);
    c[this.used++] = 0x0a;
    this.rows++;
  }

  get bytes(): number {
    return this.bytesBefore + this.used;
  }

  /** Every line, each ending in "\n", as one Buffer. */
  toBuffer(): Buffer {
    if (this.chunk === null) return Buffer.alloc(0);
    const last = this.chunk.subarray(0, this.used);
    return this.chunks.length === 0 ? last : Buffer.concat([...this.chunks, last], this.bytes);
  }

  private grow(atLeast: number): void {
    if (this.chunk !== null) {
      this.chunks.push(this.chunk.subarray(0, this.used));
      this.bytesBefore += this.used;
    }
    // Off the pool (allocUnsafeSlow): pooled slices would keep 8 KB pool slabs alive.
    this.chunk = Buffer.allocUnsafeSlow(Math.max(CHUNK_BYTES, atLeast));
    this.used = 0;
  }
}
