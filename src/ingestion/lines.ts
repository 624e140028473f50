/** A run of consecutive lines of a file; `first` is the 1-based number of lines[0]. */
export interface LineBatch {
  first: number;
  lines: string[];
  /** Bytes of the file consumed so far, this batch included. */
  bytesRead: number;
  /** Lines of this batch longer than MAX_LINE_BYTES (read as blank), when the reader goes on past them. */
  tooLong?: number[];
}

/**
 * A line longer than this is refused: it is staged and stored as one JetStream message,
 * which must stay under the server's max_payload (1 MiB by default). @default 512 KiB
 */
export const MAX_LINE_BYTES = 512 * 1024;

export class LineTooLongError extends Error {
  override name = "LineTooLongError";
  constructor(readonly line: number) {
    super(tooLongMessage(line));
  }
}

export const tooLongMessage = (line: number) => `line ${line} is longer than ${MAX_LINE_BYTES} bytes`;

/**
 * Splits a byte stream into lines, one batch per chunk: yielding per chunk rather than
 * per line keeps the async overhead off the per-line path (millions of lines). A
 * trailing "\r" is dropped, so CRLF files read the same. Memory: one chunk plus the
 * unfinished line.
 *
 * A line longer than MAX_LINE_BYTES throws LineTooLongError, unless `goOn`: then it is
 * read as a blank line named in its batch's `tooLong` (its text never held whole), and
 * reading goes on, so a file's check reports every bad line, not only the first.
 */
export async function* lineBatches(chunks: AsyncIterable<Uint8Array | string>, goOn = false): AsyncGenerator<LineBatch> {
  const decoder = new TextDecoder();
  let carry = "";
  let next = 1;
  let bytes = 0;
  /** The line being skipped (too long, its end not read yet), else 0. */
  let skipping = 0;
  for await (const chunk of chunks) {
    bytes += typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.byteLength;
    let text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    const tooLong: number[] = [];
    if (skipping > 0) {
      const end = text.indexOf("\n");
      if (end < 0) continue;
      // The skipped line ends here, and is this batch's first line (blank).
      tooLong.push(skipping);
      skipping = 0;
      text = text.slice(end);
    } else text = carry + text;
    const parts = text.split("\n");
    carry = parts.pop()!;
    for (let i = 0; i < parts.length; i++) {
      if (parts[i]!.length > MAX_LINE_BYTES) {
        if (!goOn) throw new LineTooLongError(next + i);
        tooLong.push(next + i);
        parts[i] = "";
      } else if (parts[i]!.endsWith("\r")) parts[i] = parts[i]!.slice(0, -1);
    }
    if (carry.length > MAX_LINE_BYTES) {
      if (!goOn) throw new LineTooLongError(next + parts.length);
      skipping = next + parts.length;
      carry = "";
    }
    if (parts.length === 0) continue;
    yield { first: next, lines: parts, bytesRead: bytes, ...(tooLong.length > 0 ? { tooLong } : {}) };
    next += parts.length;
  }
  if (skipping > 0) {
    yield { first: next, lines: [""], bytesRead: bytes, tooLong: [skipping] };
    return;
  }
  carry += decoder.decode();
  if (carry.endsWith("\r")) carry = carry.slice(0, -1);
  if (carry.length > 0) yield { first: next, lines: [carry], bytesRead: bytes };
}
