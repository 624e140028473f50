import type { JetStreamManager } from "@nats-io/jetstream";
import type { TopologyNames } from "../../infra/nats/topology.js";
import { durablesOf } from "../../infra/nats/durable-consumer.js";

/** One figure per partition durable, added up: what a test read from the single durable of the first layout. */
export interface ConsumerTotals {
  delivered: number;
  num_pending: number;
  num_ack_pending: number;
  num_redelivered: number;
}

/** The namespace's partition durables (or the families named by `family`), their counts added up. */
export async function partitionConsumerTotals(jsm: JetStreamManager, names: TopologyNames, family: (p: number) => string = names.stateConsumers): Promise<ConsumerTotals> {
  const t: ConsumerTotals = { delivered: 0, num_pending: 0, num_ack_pending: 0, num_redelivered: 0 };
  for (let p = 0; p < names.partitions; p++) {
    for (const info of await durablesOf(jsm, names.logsStream, family(p))) {
    t.delivered += info.delivered.consumer_seq;
    t.num_pending += info.num_pending;
    t.num_ack_pending += info.num_ack_pending;
    t.num_redelivered += info.num_redelivered;
    }
  }
  return t;
}
