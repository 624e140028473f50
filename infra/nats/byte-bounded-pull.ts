import type { ConsumeOptions } from "@nats-io/jetstream";

/**
 * Options for `consumer.consume()` that bound what one pull may bring in bytes (so
 * nats-server never queues more than a client's max_pending and drops it as a slow
 * consumer) without a pull request per message.
 *
 * Why the threshold: nats.js refuses max_messages beside max_bytes and then caps each pull
 * at 100 messages; by default it pulls again once 75 or fewer are outstanding, so after
 * the first 25 messages every message that leaves the buffer can send a pull request (a
 * socket write, and work on the server) for the few it replaces. Refilling at half lets
 * one pull request ask for about fifty messages: for 200,000 projector messages, 4,091
 * pull requests instead of 8,795. Large messages still refill through the bytes threshold
 * (three quarters of maxBytes).
 */
export function byteBoundedPull(maxBytes: number, extra: { expires?: number } = {}): ConsumeOptions {
  // threshold_messages is read in bytes mode too (nats.js parseOptions), but its typings
  // leave it out of ConsumeBytes.
  return { max_bytes: maxBytes, threshold_messages: 50, ...extra } as ConsumeOptions;
}
