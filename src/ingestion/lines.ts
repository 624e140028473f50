/** A run of consecutive lines of a file; `first` is the 1-based number of lines[0]. */
export interface LineBatch {
  first: number;
  lines: string[];
  /** Bytes of the file consumed so far, this batch included. */
  bytesRead: number;
}

/**
 * A line longer than this is refused: it is staged and stored as one JetStream message,
 * which must stay under the server's max_payload (1 MiB by default). @default 512 KiB
 */
export const MAX_LINE_BYTES = 512 * 1024;

export class LineTooLongError extends Error {
  override name = "LineTooLongError";
  constructor(readonly line: number) {
    super(`line ${line} is longer than ${MAX_LINE_BYTES} bytes`);
  }
}

/**
 * Splits a byte stream into lines, one batch per chunk: yielding per chunk rather than
 * per line keeps the async overhead off the per-line path (millions of lines). A
 * trailing "\r" is dropped, so CRLF files read the same. Memory: one chunk plus the
 * unfinished line.
 */
export async function* lineBatches(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<LineBatch> {
  const decoder = new TextDecoder();
  let carry = "";
  let next = 1;
  let bytes = 0;
  for await (const chunk of chunks) {
    bytes += typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.byteLength;
    const text = carry + (typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }));
    const parts = text.split("\n");
    carry = parts.pop()!;
    if (carry.length > MAX_LINE_BYTES) throw new LineTooLongError(next + parts.length);
    for (let i = 0; i < parts.length; i++) if (parts[i]!.length > MAX_LINE_BYTES) throw new LineTooLongError(next + i);
    if (parts.length === 0) continue;
    for (let i = 0; i < parts.length; i++) if (parts[i]!.endsWith("\r")) parts[i] = parts[i]!.slice(0, -1);
    yield { first: next, lines: parts, bytesRead: bytes };
    next += parts.length;
  }
  carry += decoder.decode();
  if (carry.endsWith("\r")) carry = carry.slice(0, -1);
  if (carry.length > 0) yield { first: next, lines: [carry], bytesRead: bytes };
}
