import type { Consumer, ConsumerMessages, JsMsg } from "@nats-io/jetstream";

export interface PacedPullOptions {
  /**
   * Messages one pull may bring. In messages, not bytes: nats.js takes one or the other,
   * and a fetch bounded in bytes is capped at 100 messages by the client, which then waits
   * for the rest of the bytes after the server has ended the pull at 100 (until its
   * heartbeats are missed). A message is at most nats-server's max_payload (1 MB by
   * default), so 50 of them stay below a client's 64 MB max_pending.
   */
  maxMessages: number;
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
 * their size. Here each pull is one `fetch()` of at most `maxMessages`, and the next one
 * is sent only once `room()` resolves: what the reader holds stays within its own budget
 * plus one pull. A pull that finds nothing waits up to `expires` and is sent again.
 */
export class PacedPull implements AsyncIterable<JsMsg> {
  private current: ConsumerMessages | null = null;
  private stopped = false;

  constructor(
    private readonly consumer: Consumer,
    private readonly opts: PacedPullOptions,
  ) {}

  /** Ends the iteration; messages of the open pull not yet read come again after their ack wait. */
  stop(): void {
    this.stopped = true;
    this.current?.stop();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<JsMsg> {
    while (!this.stopped) {
      await this.opts.room();
      if (this.stopped) return;
      try {
        this.current = await this.consumer.fetch({ max_messages: this.opts.maxMessages, expires: this.opts.expires });
        if (this.stopped) this.current.stop();
        for await (const m of this.current) yield m;
      } catch (err) {
        if (this.stopped) return;
        this.opts.onError(err);
        await new Promise((r) => setTimeout(r, this.opts.retryMs ?? 1_000));
      } finally {
        this.current = null;
      }
    }
  }
}
