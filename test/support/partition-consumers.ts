import type { JetStreamManager } from "@nats-io/jetstream";
import type { TopologyNames } from "../../infra/nats/topology.js";

/** One figure per partition durable, added up: what a test read from the single durable of the first layout. */
export interface ConsumerTotals {
  delivered: number;
  num_pending: number;
  num_ack_pending: number;
  num_redelivered: number;
}

/** The namespace's partition durables (or those named by `name`), their counts added up; a missing durable counts nothing. */
export async function partitionConsumerTotals(jsm: JetStreamManager, names: TopologyNames, name: (p: number) => string = names.stateConsumer): Promise<ConsumerTotals> {
  const t: ConsumerTotals = { delivered: 0, num_pending: 0, num_ack_pending: 0, num_redelivered: 0 };
  for (let p = 0; p < names.partitions; p++) {
    const info = await jsm.consumers.info(names.logsStream, name(p)).catch(() => null);
    if (!info) continue;
    t.delivered += info.delivered.consumer_seq;
    t.num_pending += info.num_pending;
    t.num_ack_pending += info.num_ack_pending;
    t.num_redelivered += info.num_redelivered;
  }
  return t;
}
