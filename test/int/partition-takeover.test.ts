import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { connectNats } from "../../infra/nats/connection.js";
import { durablesOf, takeOverDurable } from "../../infra/nats/durable-consumer.js";
import { PartitionReaders } from "../../actors/partition-readers.js";

// A partition's take-over against a real JetStream: the new tenure's durable reads on from
// the lowest ack floor of the earlier ones, which go only once it exists; a start that
// fails leaves nothing registered, so the lease can be given up and taken again.
let nc: NatsConnection;
let jsm: JetStreamManager;
const stream = `TAKEOVER_${randomBytes(4).toString("hex").toUpperCase()}`;
const subject = `${stream.toLowerCase()}.log`;
const config = (name: string) => ({ durable_name: name, ack_policy: AckPolicy.Explicit, filter_subject: `${subject}.>` });
const silent = { warn: () => undefined, error: () => undefined };

beforeAll(async () => {
  nc = await connectNats("nats://127.0.0.1:4222");
  jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [`${subject}.>`] });
  const js = jetstream(nc);
  for (let i = 0; i < 10; i++) await js.publish(`${subject}.0`, "x");
});
afterAll(async () => {
  await jsm.streams.delete(stream).catch(() => undefined);
  await nc.close();
});

describe("a partition's take-over", () => {
  it("reads on after the lowest ack floor of the earlier durables, and deletes them once its own exists", async () => {
    await jsm.consumers.add(stream, { ...config("fam_p0_3"), deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: 5 });
    await jsm.consumers.add(stream, { ...config("fam_p0_4"), deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: 8 });
    expect(await takeOverDurable(jsm, stream, "fam_p0_", config("fam_p0_5"))).toBe(4);
    const left = await durablesOf(jsm, stream, "fam_p0_");
    expect(left.map((c) => c.name)).toEqual(["fam_p0_5"]);
    expect(left[0]!.num_pending).toBe(6);
  });

  it("leaves the earlier durables in place when its own cannot be made", async () => {
    await jsm.consumers.add(stream, { ...config("bad_p0_1"), deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: 3 });
    // A filter outside the stream's subjects: JetStream refuses the durable.
    await expect(takeOverDurable(jsm, stream, "bad_p0_", { ...config("bad_p0_2"), filter_subject: "elsewhere.>" })).rejects.toThrow();
    expect((await durablesOf(jsm, stream, "bad_p0_")).map((c) => c.name)).toEqual(["bad_p0_1"]);
  });

  it("throws a reader's failed start to the caller and keeps nothing registered", async () => {
    const readers = new PartitionReaders({
      js: jetstream(nc), jsm, stream: "NO_SUCH_STREAM", name: "test",
      durable: (p) => ({ family: `none_p${p}_`, filter: `${subject}.${p}` }),
      pullBytes: 1024, room: () => Promise.resolve(), dispatch: () => undefined, log: silent,
    });
    await expect(readers.add(0, 1)).rejects.toThrow();
    expect(readers.held()).toEqual([]);
    expect(readers.has(0)).toBe(false);
  });
});
