/**
 * Whether readers of the log stream slow its publishers (a part's figure: JetStream alone,
 * no service). 120,000 logs, one a message on per-patient subjects over 16 partitions and
 * 10,000 patients, published with about 3,200 in flight by the service's publisher, as the
 * write path publishes them:
 *
 * - alone;
 * - while 16 pull consumers filtered on their partition (the engine's layout) and one
 *   unfiltered consumer (the projector's) read and acknowledge every message;
 * - the same logs over 16 streams, one per partition, each read by one unfiltered consumer
 *   for the engine and one for the projector.
 *
 * Prints publish logs/s, nats-server's CPU per log and what the readers had acknowledged
 * when the last publish was confirmed.
 *
 *   npx tsx bench/nats-read-contention.ts
 */
import { connect } from "@nats-io/transport-node";
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { natsServerCpu } from "./support.js";
import { freshStream, inFlight, SAMPLE_LOG } from "./jetstream-load.js";
import { createJetStreamPublisher } from "../infra/nats/jetstream-publisher.js";

const nc = await connect({ servers: "127.0.0.1:4222" });
const jsm = await jetstreamManager(nc);
const js = jetstream(nc);
const pub = createJetStreamPublisher(nc, { timeoutMs: 10_000 });
const PARTITIONS = 16;
const TOTAL = 120_000;
const body = new TextEncoder().encode(JSON.stringify({ logs: [SAMPLE_LOG] }));

/** A durable pull consumer that acknowledges everything it reads; returns a counter and a stop. */
async function reader(stream: string, durable: string, filter?: string) {
  await jsm.consumers.add(stream, { durable_name: durable, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, max_ack_pending: 20_000, ...(filter ? { filter_subject: filter } : {}) });
  const c = await js.consumers.get(stream, durable);
  const messages = await c.consume({ max_messages: 1_000 });
  const seen = { n: 0 };
  void (async () => {
    for await (const m of messages) {
      m.ack();
      seen.n++;
    }
  })();
  return { seen, stop: () => messages.stop() };
}

async function publishAll(subjectOf: (i: number) => string) {
  const n0 = natsServerCpu();
  const t0 = performance.now();
  await inFlight(TOTAL, 3_200, (i) => pub.publish(subjectOf(i), body));
  return { seconds: (performance.now() - t0) / 1000, nats: natsServerCpu() - n0 };
}

const subject = (prefix: string, i: number) => `${prefix}.${i % PARTITIONS}.org.prj.pat${i % 10_000}`;
const report = (mode: string, r: { seconds: number; nats: number }, read?: number) =>
  console.log(JSON.stringify({ mode, logs_per_s: Math.round(TOTAL / r.seconds), nats_us_per_log: +((r.nats * 1e6) / TOTAL).toFixed(1), ...(read === undefined ? {} : { read_and_acked_when_published: read }) }));

// One stream, no readers.
await freshStream(jsm, "rc_alone", ["rca.>"]);
report("one stream, no readers", await publishAll((i) => subject("rca", i)));
await jsm.streams.delete("rc_alone");

// One stream, the engine's 16 filtered readers and the projector's one.
await freshStream(jsm, "rc_one", ["rc1.>"]);
const one = [
  ...(await Promise.all(Array.from({ length: PARTITIONS }, (_, p) => reader("rc_one", `engine_p${p}`, `rc1.${p}.>`)))),
  await reader("rc_one", "projector"),
];
const r1 = await publishAll((i) => subject("rc1", i));
report("one stream, 16 filtered readers and 1 unfiltered", r1, one.reduce((s, r) => s + r.seen.n, 0));
one.forEach((r) => r.stop());
await jsm.streams.delete("rc_one");

// A stream per partition, each read by an unfiltered engine reader and a projector reader.
const streams = Array.from({ length: PARTITIONS }, (_, p) => `rc_p${p}`);
for (const [p, name] of streams.entries()) await freshStream(jsm, name, [`rcp.${p}.>`]);
const per = (await Promise.all(streams.flatMap((name) => [reader(name, "engine"), reader(name, "projector")])));
const r2 = await publishAll((i) => subject("rcp", i));
report("a stream per partition, 2 unfiltered readers each", r2, per.reduce((s, r) => s + r.seen.n, 0));
per.forEach((r) => r.stop());
for (const name of streams) await jsm.streams.delete(name);

pub.close();
await nc.close();
