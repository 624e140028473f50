/**
 * One 32-bit integer per file line (1-based), growing as lines come: four bytes a line,
 * so a file of millions of lines costs megabytes, and it is stored as one binary document.
 */
export class LineInts {
  protected data = new Int32Array(1 << 16);
  protected size = 0;

  get lines(): number {
    return this.size;
  }

  set(line: number, value: number): void {
    while (line > this.data.length) {
      const bigger = new Int32Array(Math.max(1 << 16, this.data.length * 2));
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[line - 1] = value;
    if (line > this.size) this.size = line;
  }

  get(line: number): number {
    return line <= this.size ? this.data[line - 1]! : 0;
  }

  /** Little-endian bytes of the first `lines` entries. */
  toBytes(): Uint8Array {
    return new Uint8Array(this.data.buffer, 0, this.size * 4).slice();
  }

  protected load(bytes: Uint8Array): this {
    const copy = new Uint8Array(bytes.length);
    copy.set(bytes);
    this.data = new Int32Array(copy.buffer, 0, bytes.length >> 2);
    this.size = this.data.length;
    return this;
  }

  static fromBytes(bytes: Uint8Array): LineInts {
    return new LineInts().load(bytes);
  }
}

/**
 * What each line of a file feeds, as validation found it, so later passes need not
 * parse the line again: 0 nothing to stage (a patient row, a blank line, a log skipped
 * for its errors); n > 0 a log of the patient declared on line n; -k a log of the k-th
 * existing patient (1-based, see `existing`).
 */
export class LineTargets extends LineInts {
  /** Existing patients that logs name, by index (k - 1). */
  readonly existing: string[] = [];
  private readonly existingIndex = new Map<string, number>();

  /** Marks the line as a log of an existing patient. */
  setExisting(line: number, patientId: string): void {
    let k = this.existingIndex.get(patientId);
    if (k === undefined) {
      this.existing.push(patientId);
      k = this.existing.length;
      this.existingIndex.set(patientId, k);
    }
    this.set(line, -k);
  }

  static override fromBytes(bytes: Uint8Array, existing: string[] = []): LineTargets {
    const t = new LineTargets().load(bytes);
    existing.forEach((id, i) => {
      t.existing.push(id);
      t.existingIndex.set(id, i + 1);
    });
    return t;
  }
}
