/** A new batch's buffer when the pool has none: it doubles while a batch needs more. */
const FIRST_BYTES = 1024 * 1024;
/** Larger buffers are not kept for another batch (a one-off batch of huge payloads). */
const KEEP_AT_MOST_BYTES = 32 * 1024 * 1024;

/**
 * Buffers of batches whose insert is done, handed to the next batches. The projector
 * fills one batch while the previous one inserts, so two buffers serve it for good.
 * Allocated afresh, each batch's megabytes of bytes outside the heap lived through its
 * insert, were promoted with their Buffer objects and so waited for a full collection,
 * and V8 answered the growing external memory with collections of its own ("external
 * memory pressure": about half of a job's young-generation collections).
 */
export class RowBufferPool {
  private readonly free: Buffer[] = [];

  constructor(private readonly keep = 2) {}

  take(): Buffer | undefined {
    return this.free.pop();
  }

  give(b: Buffer): void {
    if (this.free.length < this.keep && b.length <= KEEP_AT_MOST_BYTES) this.free.push(b);
  }
}

/**
 * A batch of rows encoded as text lines, kept as bytes outside the JavaScript heap, in
 * one buffer (the insert takes one). Each row's string is written out as soon as it is
 * encoded and can die young; as strings, a batch of 20,000 rows (about 8 MB) survived
 * every young-generation collection until its insert was done.
 */
export class EncodedRows {
  private buf: Buffer;
  private used = 0;
  private released = false;
  rows = 0;

  constructor(private readonly pool?: RowBufferPool) {
    this.buf = pool?.take() ?? Buffer.allocUnsafeSlow(FIRST_BYTES);
  }

  push(line: string): void {
    const room = this.buf.length - this.used - 1;
    // With room for the worst case (three bytes per UTF-16 unit) the line is not measured first.
    if (line.length * 3 > room) {
      const n = Buffer.byteLength(line);
      if (n > room) this.grow(n + 1);
    }
    this.used += this.buf.write(line, this.used);
    this.buf[this.used++] = 0x0a;
    this.rows++;
  }

  get bytes(): number {
    return this.used;
  }

  /** Every line, each ending in "\n": a view of the batch's buffer, valid until release(). */
  toBuffer(): Buffer {
    return this.buf.subarray(0, this.used);
  }

  /** Hands the buffer back for another batch; only once nothing reads it any more (its insert is done). */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.pool?.give(this.buf);
  }

  private grow(atLeast: number): void {
    let size = this.buf.length * 2;
    while (size < this.used + atLeast) size *= 2;
    // Off the pool (allocUnsafeSlow): pooled slices would keep 8 KB pool slabs alive.
    const next = Buffer.allocUnsafeSlow(size);
    this.buf.copy(next, 0, 0, this.used);
    this.buf = next;
  }
}

/**
 * Where to cut encoded rows (lines, each ending in "\n") in two parts of whole lines: after
 * the line that holds the middle byte, else after the one before it; 0 for a single line.
 * A newline byte only ever ends a line: JSON text escapes newlines, and no byte of a
 * multi-byte UTF-8 character is below 0x80.
 */
export function middleOfRows(rows: Buffer): number {
  const after = rows.indexOf(0x0a, rows.length >> 1) + 1;
  if (after > 0 && after < rows.length) return after;
  const before = (rows.length >> 1) - 1;
  return before < 0 ? 0 : rows.lastIndexOf(0x0a, before) + 1;
}
