import { DeliverPolicy, type ConsumerConfig, type ConsumerInfo, type JetStreamManager } from "@nats-io/jetstream";

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
  await jsm.consumers.add(stream, { ...config, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: floorOf(info) + 1 });
  return info.num_ack_pending;
}

/**
 * Makes `config.durable_name` the one durable of its family (names starting with
 * `family`), reading from the lowest ack floor among the family's existing durables, which
 * it deletes. A partition's new holder names its durable after its lease's epoch, so a
 * previous holder that has not noticed its lease lapsed (a long pause) can neither pull
 * from nor acknowledge on the new one: it would otherwise take some of a patient's
 * messages while the new holder applies the later ones. What was acknowledged after the
 * floor comes again, which readers take as already done (see durableFromAckFloor).
 * Returns the stream sequence reading starts after (0: from the start).
 */
export async function takeOverDurable(jsm: JetStreamManager, stream: string, family: string, config: DurableConfig): Promise<number> {
  const members = await durablesOf(jsm, stream, family);
  const start = members.length === 0 ? 0 : Math.min(...members.map(floorOf));
  const old = members.filter((c) => c.name !== config.durable_name);
  // Made before the old ones go: a take-over that fails midway (JetStream too slow to
  // answer) leaves their ack floors in place for the next try, never a family without one.
  // (A durable of the same name, only without leases, must go first.)
  if (old.length < members.length) await jsm.consumers.delete(stream, config.durable_name);
  await jsm.consumers.add(stream, { ...config, ...(start > 0 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start + 1 } : { deliver_policy: DeliverPolicy.All }) });
  for (const c of old) await jsm.consumers.delete(stream, c.name).catch(() => undefined);
  return start;
}

/**
 * The stream sequence a durable has done everything up to. JetStream's ack floor stays 0
 * until a first ack, also for a durable made to start further on (an earlier take-over's,
 * that acknowledged nothing yet): its start then says where it stands.
 */
function floorOf(c: ConsumerInfo): number {
  const startedAfter = c.config.deliver_policy === DeliverPolicy.StartSequence ? (c.config.opt_start_seq ?? 1) - 1 : 0;
  return Math.max(c.ack_floor.stream_seq, startedAfter);
}

/**
 * The names of a stream's consumers, from JetStream's names API. nats.js lists consumers
 * only with their info, and nats-server 2.9 computes each info's pending count over its
 * filter: with a durable per partition and lease tenure on a large stream, one list took
 * seconds and held up every other JetStream request of the member (lease renewals with them).
 */
async function consumerNames(jsm: JetStreamManager, stream: string): Promise<string[]> {
  // The consumer API's own request path (its prefix covers JetStream domains): ConsumerAPIImpl.
  const api = jsm.consumers as unknown as { prefix: string; _request(subject: string, data?: unknown): Promise<unknown> };
  const out: string[] = [];
  for (;;) {
    const page = (await api._request(`${api.prefix}.CONSUMER.NAMES.${stream}`, { offset: out.length })) as { consumers: string[] | null; total: number };
    const names = page.consumers ?? [];
    out.push(...names);
    if (names.length === 0 || out.length >= page.total) return out;
  }
}

/** The stream's durables whose names start with `family` (a few), each with its info. */
export async function durablesOf(jsm: JetStreamManager, stream: string, family: string): Promise<ConsumerInfo[]> {
  const names = (await consumerNames(jsm, stream)).filter((n) => n.startsWith(family));
  const infos = await Promise.all(
    names.map((n) =>
      jsm.consumers.info(stream, n).catch((err: unknown) => {
        // Deleted between the two requests (another member's take-over).
        if (String((err as Error).message).includes("consumer not found")) return null;
        throw err;
      }),
    ),
  );
  return infos.filter((c): c is ConsumerInfo => c !== null);
}
