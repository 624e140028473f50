import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import type { JetStreamPublisher } from "../../infra/nats/jetstream-publisher.js";
import type { TopologyNames } from "../../infra/nats/topology.js";

/** One staged log: its file line, its patient and the line's text as uploaded. */
export interface StagedLine {
  line: number;
  patient: string;
  text: string;
}

export interface StagingDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  publisher: JetStreamPublisher;
  names: TopologyNames;
}

/** A bucket's buffer is sent once this big (well under the server's 1 MiB max_payload). */
const BUCKET_FLUSH_CHARS = 256 * 1024;
/** Every buffer is sent once they hold this much together (many buckets: a big file). */
const TOTAL_FLUSH_CHARS = 16 * 1024 * 1024;
/** Staged text per bucket: replay holds one bucket (or two) in memory at a time. */
export const BUCKET_TARGET_BYTES = 4 * 1024 * 1024;

const encoder = new TextEncoder();

/**
 * A publish awaited later (with others, by Promise.all): if the stage fails first (the
 * upload's read failing as NATS restarts), its own failure must not be an unhandled
 * rejection, which ends the process.
 */
function handled<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

/** How many buckets a file of `bytes` is staged into. */
export function bucketCount(bytes: number, perBucket = BUCKET_TARGET_BYTES): number {
  return Math.min(65_536, Math.max(1, Math.ceil(bytes / perBucket)));
}

/** FNV-1a: a patient always lands in the same bucket. */
export function bucketOf(patientId: string, buckets: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < patientId.length; i++) h = Math.imul(h ^ patientId.charCodeAt(i), 0x01000193);
  return (h >>> 0) % buckets;
}

/**
 * Writes a job's valid log lines to the staging stream, grouped into buckets by patient
 * (`{ns}.staging.{job}.p.{bucket}`): REPLAYING reads a bucket with one consumer and has
 * every log of its patients, while messages stay large (a file that interleaves patients
 * still costs few publishes). An entry is `line \t patient \t text`; entries are joined
 * by newlines (a JSON line holds neither raw).
 */
export class StagingWriter {
  private readonly buffers: { entries: string[]; chars: number }[];
  private inflight: Promise<unknown>[] = [];
  private buffered = 0;
  /** Lines staged per patient. */
  readonly counts = new Map<string, number>();

  constructor(
    private readonly deps: StagingDeps,
    private readonly jobId: string,
    readonly buckets: number,
  ) {
    this.buffers = Array.from({ length: buckets }, () => ({ entries: [], chars: 0 }));
  }

  /** Buffers a line; resolves at once unless enough publishes wait for their acks (backpressure). */
  add(patientId: string, line: number, text: string): Promise<void> | void {
    const entry = `${line}\t${patientId}\t${text}`;
    const bucket = bucketOf(patientId, this.buckets);
    this.counts.set(patientId, (this.counts.get(patientId) ?? 0) + 1);
    const full = this.buffers[bucket]!;
    if (full.chars + entry.length >= BUCKET_FLUSH_CHARS && full.entries.length > 0) this.send(bucket);
    const b = this.buffers[bucket]!;
    b.entries.push(entry);
    b.chars += entry.length + 1;
    this.buffered += entry.length + 1;
    if (this.buffered >= TOTAL_FLUSH_CHARS) return this.flush();
    if (this.inflight.length >= 32) return this.drain();
  }

  private send(bucket: number): void {
    const b = this.buffers[bucket]!;
    this.buffered -= b.chars;
    const body = encoder.encode(b.entries.join("\n"));
    this.buffers[bucket] = { entries: [], chars: 0 };
    this.inflight.push(handled(this.deps.publisher.publish(this.deps.names.stagingSubject(this.jobId, String(bucket)), body)));
  }

  private async drain(): Promise<void> {
    const waiting = this.inflight;
    this.inflight = [];
    await Promise.all(waiting);
  }

  /** Sends every buffer and waits for JetStream to store them. */
  async flush(): Promise<void> {
    for (let i = 0; i < this.buffers.length; i++) if (this.buffers[i]!.entries.length > 0) this.send(i);
    await this.drain();
  }
}

/** Sequence of the last message of `subject` in `stream`; 0 when it has none. */
export async function lastSeqOf(jsm: JetStreamManager, stream: string, subject: string): Promise<number> {
  try {
    return (await jsm.streams.getMessage(stream, { last_by_subj: subject }))?.seq ?? 0;
  } catch (err) {
    if (String((err as Error).message).includes("no message found")) return 0;
    throw err;
  }
}

/** Every message of one subject of the staging stream, in order (ordered consumer; none → nothing). */
async function* readSubjectRaw(deps: StagingDeps, subject: string, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
  const { js, jsm, names } = deps;
  const last = await lastSeqOf(jsm, names.stagingStream, subject);
  if (last === 0) return;
  const consumer = await js.consumers.get(names.stagingStream, { filter_subjects: subject });
  const iter = await consumer.consume({ max_messages: 32 });
  try {
    for await (const m of iter) {
      if (signal?.aborted) throw signal.reason ?? new Error("aborted");
      yield m.data;
      if (m.seq >= last) break;
    }
  } finally {
    iter.stop();
    await consumer.delete().catch(() => undefined);
  }
}

const decoder = new TextDecoder();

/** A bucket's staged lines, message by message. */
export async function* readBucket(deps: StagingDeps, jobId: string, bucket: number, signal?: AbortSignal): AsyncGenerator<StagedLine[]> {
  for await (const body of readSubjectRaw(deps, deps.names.stagingSubject(jobId, String(bucket)), signal)) yield parseStaged(decoder.decode(body));
}

export function parseStaged(body: string): StagedLine[] {
  return body.split("\n").map((entry) => {
    const a = entry.indexOf("\t");
    const b = entry.indexOf("\t", a + 1);
    return { line: Number(entry.slice(0, a)), patient: entry.slice(a + 1, b), text: entry.slice(b + 1) };
  });
}

/** Rows per message of a job document: well under max_payload for rows of a few hundred bytes. */
const DOC_ROWS_PER_MESSAGE = 500;
/** Bytes per message of a binary document. */
const DOC_BYTES_PER_MESSAGE = 512 * 1024;

/**
 * A job's working document (its patient rows, its patients, its line targets), kept in
 * the staging stream beside its logs: unlike the upload bucket it does not expire, so a
 * job may wait for its confirmation as long as it is configured to. Written in pieces
 * as it is produced, so memory stays bounded; begin() drops an older version.
 */
export class DocWriter<T> {
  private rows: T[] = [];
  private sends: Promise<unknown>[] = [];
  private readonly subject: string;

  constructor(
    private readonly deps: StagingDeps,
    jobId: string,
    name: string,
  ) {
    this.subject = deps.names.stagingDocSubject(jobId, name);
  }

  async begin(): Promise<this> {
    await this.deps.jsm.streams.purge(this.deps.names.stagingStream, { filter: this.subject });
    return this;
  }

  async add(row: T): Promise<void> {
    this.rows.push(row);
    if (this.rows.length >= DOC_ROWS_PER_MESSAGE) await this.send();
  }

  private async send(): Promise<void> {
    this.sends.push(handled(this.deps.publisher.publish(this.subject, encoder.encode(JSON.stringify(this.rows)))));
    this.rows = [];
    if (this.sends.length >= 16) await this.settle();
  }

  private async settle(): Promise<void> {
    const s = this.sends;
    this.sends = [];
    await Promise.all(s);
  }

  /** Ends the document. An empty one is one empty message, so "written, empty" differs from "never written". */
  async end(): Promise<void> {
    await this.send();
    await this.settle();
  }
}

export async function writeDoc<T>(deps: StagingDeps, jobId: string, name: string, rows: T[]): Promise<void> {
  const w = await new DocWriter<T>(deps, jobId, name).begin();
  for (const r of rows) await w.add(r);
  await w.end();
}

/** The document's rows, piece by piece; nothing when it was never written. */
export async function* docPieces<T>(deps: StagingDeps, jobId: string, name: string, signal?: AbortSignal): AsyncGenerator<T[]> {
  for await (const body of readSubjectRaw(deps, deps.names.stagingDocSubject(jobId, name), signal)) yield JSON.parse(decoder.decode(body)) as T[];
}

/** The whole document, or null when it was never written. */
export async function readDoc<T>(deps: StagingDeps, jobId: string, name: string): Promise<T[] | null> {
  let rows: T[] | null = null;
  for await (const piece of docPieces<T>(deps, jobId, name)) (rows ??= []).push(...piece);
  return rows;
}

export async function writeBinaryDoc(deps: StagingDeps, jobId: string, name: string, bytes: Uint8Array): Promise<void> {
  const subject = deps.names.stagingDocSubject(jobId, name);
  await deps.jsm.streams.purge(deps.names.stagingStream, { filter: subject });
  const sends: Promise<unknown>[] = [];
  for (let i = 0; i === 0 || i < bytes.length; i += DOC_BYTES_PER_MESSAGE) sends.push(deps.publisher.publish(subject, bytes.subarray(i, i + DOC_BYTES_PER_MESSAGE)));
  await Promise.all(sends);
}

export async function readBinaryDoc(deps: StagingDeps, jobId: string, name: string): Promise<Uint8Array | null> {
  const parts: Uint8Array[] = [];
  let found = false;
  for await (const body of readSubjectRaw(deps, deps.names.stagingDocSubject(jobId, name))) {
    found = true;
    parts.push(body);
  }
  return found ? Buffer.concat(parts) : null;
}

/** Drops a job's staged logs; `everything` also drops its documents. */
export async function purgeStaging(deps: Pick<StagingDeps, "jsm" | "names">, jobId: string, everything = false): Promise<void> {
  const filter = everything ? deps.names.stagingSubjectsOfJob(jobId) : deps.names.stagingLogSubjectsOfJob(jobId);
  await deps.jsm.streams.purge(deps.names.stagingStream, { filter });
}
