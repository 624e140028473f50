import { DeliverPolicy, type ConsumerConfig, type JetStreamManager } from "@nats-io/jetstream";

export type DurableConfig = Partial<ConsumerConfig> & { durable_name: string };

/**
 * Creates the durable unless it exists. An existing one is left as it is: nats-server
 * treats an add under a taken name as an update, and refuses one that changes the deliver
 * policy, which durableFromAckFloor does. Two processes starting at once: the loser's
 * add fails with "already in use" or "exists", and it uses the winner's.
 */
export async function ensureDurable(jsm: JetStreamManager, stream: string, config: DurableConfig): Promise<void> {
  const found = await jsm.consumers.info(stream, config.durable_name).catch((err) => {
    if (String((err as Error).message).includes("consumer not found")) return null;
    throw err;
  });
  if (found) return;
  await jsm.consumers.add(stream, config).catch((err) => {
    const message = String((err as Error).message);
    if (!message.includes("already in use") && !message.includes("exists")) throw err;
  });
}

/**
 * Makes a durable pull consumer read again from its first unacknowledged message when a
 * previous reader left deliveries unacknowledged (it was killed between taking messages
 * and acknowledging them). JetStream sends those again only after the ack wait, and
 * newer messages first: an ack-all consumer would acknowledge the lost ones with the next
 * batch, and a reader that applies messages in stream order per key (the state engine)
 * would have moved past them. The durable is made again from its ack floor, so the
 * unacknowledged messages come first and in order; what was acknowledged after the floor
 * comes again too, which readers must (and do) take as already done.
 *
 * Only one process may read the durable (the worker process of a namespace): a reader
 * still pulling from it would lose its pulls. Returns the number of deliveries that were
 * pending (0: nothing was changed).
 */
export async function durableFromAckFloor(jsm: JetStreamManager, stream: string, config: DurableConfig): Promise<number> {
  const info = await jsm.consumers.info(stream, config.durable_name);
  if (info.num_ack_pending === 0) return 0;
  await jsm.consumers.delete(stream, config.durable_name);
  await jsm.consumers.add(stream, { ...config, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: info.ack_floor.stream_seq + 1 });
  return info.num_ack_pending;
}
