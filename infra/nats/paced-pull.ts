import type { Consumer, ConsumerMessages, JsMsg } from "@nats-io/jetstream";

export interface PacedPullOptions {
  /**
   * Bytes one pull should bring. nats.js bounds a fetch in messages or in bytes, not
   * both, and a fetch bounded in bytes is capped at 100 messages by the client, which
   * then waits for the rest of the bytes after the server has ended the pull at 100
   * (until its heartbeats are missed). So pulls are bounded in messages, as many as
   * `pullBytes` holds at the average size of the messages read so far (between 1 and
   * `maxMessages`): a few MB per pull keeps far below the 64 MB of unread output at which
   * nats-server drops a client's messages as a slow consumer.
   */
  pullBytes: number;
  /** Most messages one pull may bring. @default 1_000 */
  maxMessages?: number;
  /** How long a pull stays open waiting for messages (ms). */
  expires: number;
  /** Resolves when the reader can take more messages; awaited before every pull. */
  room: () => Promise<void>;
  /** A pull that failed (connection lost, heartbeats missed); the next one follows after `retryMs`. */
  onError: (err: unknown) => void;
  /** @default 1_000 */
  retryMs?: number;
}

/**
 * A durable consumer's messages, pulled only while the reader has room for them.
 *
 * nats.js's `consume()` pulls again as soon as messages arrive, whether or not the reader
 * has finished with the ones before, so a reader that holds messages until their work is
 * done can only be bounded by the consumer's max_ack_pending, in messages, whatever
 * their size. Here each pull is one `fetch()` of about `pullBytes`, sent when the reader
 * asks for the next message and `room()` has resolved: what the reader holds stays within
 * its own budget plus one pull. A pull that finds nothing waits up to `expires` and is
 * sent again.
 */
export class PacedPull implements AsyncIterable<JsMsg> {
  private current: ConsumerMessages | null = null;
  private stopped = false;
  /** Running average of message sizes; the first pull assumes 4 KB. */
  private averageBytes = 4_096;
  /** Resolves on stop(): a reader waiting for room (that may never come) stops at once. */
  private readonly stoppedSignal: Promise<void>;
  private signalStop!: () => void;

  constructor(
    private readonly consumer: Consumer,
    private readonly opts: PacedPullOptions,
  ) {
    this.stoppedSignal = new Promise((r) => (this.signalStop = r));
  }

  /** Ends the iteration; messages of the open pull not yet read come again after their ack wait. */
  stop(): void {
    this.stopped = true;
    this.signalStop();
    this.current?.stop();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<JsMsg> {
    while (!this.stopped) {
      await Promise.race([this.opts.room(), this.stoppedSignal]);
      if (this.stopped) return;
      try {
        const count = Math.max(1, Math.min(this.opts.maxMessages ?? 1_000, Math.floor(this.opts.pullBytes / this.averageBytes)));
        this.current = await this.consumer.fetch({ max_messages: count, expires: this.opts.expires });
        if (this.stopped) this.current.stop();
        for await (const m of this.current) {
          this.averageBytes += (m.data.length - this.averageBytes) / 16;
          yield m;
        }
      } catch (err) {
        if (this.stopped) return;
        this.opts.onError(err);
        await Promise.race([new Promise((r) => setTimeout(r, this.opts.retryMs ?? 1_000)), this.stoppedSignal]);
      } finally {
        // A reader that broke off mid-pull: the server should stop sending to it.
        this.current?.stop();
        this.current = null;
      }
    }
  }
}
