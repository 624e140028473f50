import { DeliverPolicy, type JetStreamClient, type JetStreamManager, type JsMsg } from "@nats-io/jetstream";

export interface StoredBatch<T> {
  /** Stream sequence: acceptance order across the whole stream. */
  seq: number;
  subject: string;
  data: T;
}

/**
 * Reads every message of one subject (a patient's log history) in stream order, with an
 * ordered consumer that the server forgets once done. Finishes at the subject's last
 * message as of the call, so a busy patient cannot keep the reader going forever.
 */
export async function* readSubject<T>(
  js: JetStreamClient,
  jsm: JetStreamManager,
  stream: string,
  subject: string,
  /** `decode`: how a message's bytes become its data (default: parsed as JSON); it also gets the message (its time, its subject). */
  opts: { fromSeq?: number; decode?: (data: Uint8Array, m: JsMsg) => T } = {},
): AsyncGenerator<StoredBatch<T>> {
  let last: number;
  try {
    const m = await jsm.streams.getMessage(stream, { last_by_subj: subject });
    if (!m) return;
    last = m.seq;
  } catch (err) {
    if (String((err as Error).message).includes("no message found")) return;
    throw err;
  }
  if (opts.fromSeq !== undefined && opts.fromSeq > last) return;
  const consumer = await js.consumers.get(stream, {
    filter_subjects: subject,
    ...(opts.fromSeq !== undefined ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: opts.fromSeq } : {}),
  });
  const iter = await consumer.consume({ max_messages: 512 });
  try {
    for await (const m of iter) {
      yield { seq: m.seq, subject: m.subject, data: opts.decode ? opts.decode(m.data, m) : m.json<T>() };
      if (m.seq >= last) break;
    }
  } finally {
    iter.stop();
    await consumer.delete().catch(() => undefined);
  }
}
