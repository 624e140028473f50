import { createInbox, headers as natsHeaders, type NatsConnection, type Subscription } from "@nats-io/transport-node";

export interface PubAck {
  stream: string;
  seq: number;
  /** True when JetStream recognised the message id within its duplicate window. */
  duplicate: boolean;
}

export interface PublishOptions {
  /** Nats-Msg-Id: JetStream drops a repeat within the stream's duplicate window. */
  msgId?: string;
  /** Nats-Expected-Last-Subject-Sequence: compare-and-set on the subject (0 = subject must be empty). */
  expectedLastSubjectSequence?: number;
}

/** A publish JetStream refused (for example a failed compare-and-set), or one that got no ack in time. */
export class JetStreamPublishError extends Error {
  override name = "JetStreamPublishError";
  constructor(message: string, readonly errCode?: number, readonly kind: "rejected" | "timeout" | "no_stream" | "closed" = "rejected", options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** JetStream's err_code for "wrong last sequence": the compare-and-set lost. */
export const ERR_WRONG_LAST_SEQUENCE = 10071;

export const isWrongLastSequence = (err: unknown): boolean =>
  err instanceof JetStreamPublishError && err.errCode === ERR_WRONG_LAST_SEQUENCE;

export interface JetStreamPublisher {
  publish(subject: string, data: Uint8Array, opts?: PublishOptions): Promise<PubAck>;
  close(): void;
}

interface Pending {
  resolve: (ack: PubAck) => void;
  reject: (err: Error) => void;
  deadline: number;
}

/**
 * Pipelined JetStream publishing over one wildcard reply subscription.
 *
 * Why not the stock `js.publish`: it builds a request (own timer, promise chain, header
 * parsing) per message and costs about 75 us of CPU per acknowledged publish here; this
 * one costs about 13 us, because every ack arrives on one subscription and one sweep
 * timer handles all time-outs. An ack still means what it always means: the stream
 * stored the message.
 */
export function createJetStreamPublisher(nc: NatsConnection, opts: { timeoutMs: number }): JetStreamPublisher {
  const prefix = createInbox();
  const pending = new Map<number, Pending>();
  const decoder = new TextDecoder();
  let next = 1;

  const sub: Subscription = nc.subscribe(`${prefix}.*`, {
    callback: (_err, msg) => {
      const id = Number(msg.subject.slice(prefix.length + 1));
      const p = pending.get(id);
      if (!p) return;
      pending.delete(id);
      if (msg.headers?.code === 503) {
        p.reject(new JetStreamPublishError(`no stream listens on this subject`, undefined, "no_stream"));
        return;
      }
      // JetStream answers a publish with either an error or where the message was stored.
      let ack: { error: { err_code?: number; description?: string } } | { error?: undefined; stream: string; seq: number; duplicate?: boolean };
      try {
        // The server's PubAck, read as its protocol defines it.
        ack = JSON.parse(decoder.decode(msg.data)) as typeof ack;
      } catch (err) {
        p.reject(new JetStreamPublishError("unreadable JetStream ack", undefined, "rejected", { cause: err }));
        return;
      }
      if (ack.error) p.reject(new JetStreamPublishError(ack.error.description ?? "publish rejected", ack.error.err_code));
      else p.resolve({ stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate === true });
    },
  });

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [id, p] of pending) {
      if (p.deadline <= now) {
        pending.delete(id);
        p.reject(new JetStreamPublishError(`no JetStream ack within ${opts.timeoutMs} ms`, undefined, "timeout"));
      }
    }
  }, Math.min(250, opts.timeoutMs));
  sweep.unref();

  return {
    publish(subject, data, o) {
      return new Promise<PubAck>((resolve, reject) => {
        if (nc.isClosed()) {
          reject(new JetStreamPublishError("NATS connection is closed", undefined, "closed"));
          return;
        }
        const id = next++;
        let h;
        if (o?.msgId !== undefined || o?.expectedLastSubjectSequence !== undefined) {
          h = natsHeaders();
          if (o.msgId !== undefined) h.set("Nats-Msg-Id", o.msgId);
          if (o.expectedLastSubjectSequence !== undefined) h.set("Nats-Expected-Last-Subject-Sequence", String(o.expectedLastSubjectSequence));
        }
        pending.set(id, { resolve, reject, deadline: Date.now() + opts.timeoutMs });
        nc.publish(subject, data, { reply: `${prefix}.${id}`, headers: h });
      });
    },
    close() {
      clearInterval(sweep);
      sub.unsubscribe();
      for (const p of pending.values()) p.reject(new JetStreamPublishError("publisher closed", undefined, "closed"));
      pending.clear();
    },
  };
}
