/** One of the process's own readers of the stream (the state engine, the ClickHouse projector). */
export interface PublishedMessageReader<T> {
  /**
   * The message stored at `seq` as this process published it, or undefined (published by
   * another process, already evicted, or delivered again): the reader then parses the
   * message's data itself. A reader takes each sequence once, in stream order.
   */
  take(seq: number): T | undefined;
}

interface Entry<T> {
  message: T;
  bytes: number;
  /** Bit i set: reader i has not taken it yet. */
  waiting: number;
}

/**
 * Messages this process just published to a stream that its own readers also consume,
 * kept as the objects that were serialized, keyed by stream sequence. Without it, the
 * writer serializes each message and the state engine and the ClickHouse projector each
 * parse it again: two parses, and their garbage, per message on the one JavaScript thread.
 *
 * What a reader gets is the very object whose JSON text the stream stored, so it must
 * treat it as read-only, as it would a parsed message it shares with another reader.
 * With `freeze` (tests), every message is deep-frozen when put, so a reader or reducer
 * that writes into a log fails loudly instead of changing another reader's copy.
 *
 * Bounded by the serialized bytes it holds (`maxBytes`): past them the oldest messages go
 * and their readers parse. A message leaves as soon as every reader has taken it or
 * passed its sequence.
 */
export class PublishedMessages<T extends object> {
  private readonly entries = new Map<number, Entry<T>>();
  private bytes = 0;
  /** Per reader: the highest sequence it has asked for. */
  private readonly marks: number[] = [];
  /** Takes answered with a message, and takes that found none (the reader parsed). */
  readonly stats = { handed: 0, missed: 0 };

  constructor(
    /** @default 16 MiB of serialized messages */
    private readonly maxBytes = 16 * 1024 * 1024,
    private readonly freeze = false,
  ) {}

  /** Registers a reader: messages put from now on wait for it too. At most 30 readers. */
  reader(): PublishedMessageReader<T> {
    if (this.marks.length >= 30) throw new Error("PublishedMessages: too many readers");
    const i = this.marks.push(0) - 1;
    return { take: (seq) => this.take(i, seq) };
  }

  /** The stream stored `message` (as `bytes` bytes of text) at `seq`. */
  put(seq: number, message: T, bytes: number): void {
    let waiting = 0;
    for (let i = 0; i < this.marks.length; i++) if (this.marks[i]! < seq) waiting |= 1 << i;
    // No reader, or every reader already went past it (it read the message first and parsed it).
    if (waiting === 0 || bytes > this.maxBytes) return;
    if (this.freeze) deepFreeze(message);
    this.entries.set(seq, { message, bytes, waiting });
    this.bytes += bytes;
    for (const [s, e] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.drop(s, e);
    }
  }

  /** Messages held and their serialized bytes, for tests and diagnostics. */
  get size(): { messages: number; bytes: number } {
    return { messages: this.entries.size, bytes: this.bytes };
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  private take(reader: number, seq: number): T | undefined {
    const bit = 1 << reader;
    if (seq > this.marks[reader]!) this.marks[reader] = seq;
    const e = this.entries.get(seq);
    let out: T | undefined;
    if (e && e.waiting & bit) {
      e.waiting &= ~bit;
      out = e.message;
      if (e.waiting === 0) this.drop(seq, e);
      this.stats.handed++;
    } else this.stats.missed++;
    this.prune();
    return out;
  }

  /** Drops the oldest messages every reader has passed (a reader skips none: stream order). */
  private prune(): void {
    let passed = Infinity;
    for (const m of this.marks) if (m < passed) passed = m;
    for (const [s, e] of this.entries) {
      if (s > passed) break;
      this.drop(s, e);
    }
  }

  private drop(seq: number, e: Entry<T>): void {
    this.entries.delete(seq);
    this.bytes -= e.bytes;
  }
}

function deepFreeze(v: unknown): void {
  if (typeof v !== "object" || v === null || Object.isFrozen(v)) return;
  Object.freeze(v);
  for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
}
