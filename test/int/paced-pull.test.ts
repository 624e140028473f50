import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { AckPolicy, jetstream, jetstreamManager, type JetStreamManager, type JsMsg } from "@nats-io/jetstream";
import { PacedPull } from "../../infra/nats/paced-pull.js";

let nc: NatsConnection;
let jsm: JetStreamManager;
const stream = `PACED_${randomBytes(4).toString("hex")}`;
const body = new Uint8Array(1_000).fill(120);

beforeAll(async () => {
  nc = await connect({ servers: process.env.NATS_URL ?? "127.0.0.1:4222" });
  jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [`${stream}.>`] });
  const js = jetstream(nc);
  await Promise.all(Array.from({ length: 300 }, () => js.publish(`${stream}.m`, body)));
});
afterAll(async () => {
  await jsm?.streams.delete(stream).catch(() => undefined);
  await nc?.close();
});

async function consumer(name: string) {
  await jsm.consumers.add(stream, { durable_name: name, ack_policy: AckPolicy.Explicit, max_ack_pending: 10_000 });
  return jetstream(nc).consumers.get(stream, name);
}
const pending = async (name: string) => (await jsm.consumers.info(stream, name)).num_ack_pending;

describe("PacedPull", () => {
  it("pulls the next batch only when the reader asks for more, so a slow reader holds one pull at most", async () => {
    const c = await consumer("slow");
    // About 20 KB per pull: 5 messages at first (4 KB assumed), then about 20 of 1 KB.
    const pull = new PacedPull(c, { pullBytes: 20_000, expires: 1_000, room: () => Promise.resolve(), onError: () => undefined });
    const held: JsMsg[] = [];
    for await (const m of pull) {
      held.push(m);
      if (held.length === 60) break;
    }
    pull.stop();
    // Delivered and not acknowledged: what was read plus what was left of one pull, not the 300 waiting.
    const delivered = await pending("slow");
    expect(delivered).toBeGreaterThanOrEqual(60);
    expect(delivered).toBeLessThanOrEqual(60 + 20);
    for (const m of held) m.ack();
  });

  it("waits for room before each pull", async () => {
    const c = await consumer("gated");
    let open = false;
    let release: () => void = () => undefined;
    const pull = new PacedPull(c, {
      pullBytes: 10_000,
      expires: 1_000,
      room: () => (open ? Promise.resolve() : new Promise<void>((r) => (release = r))),
      onError: () => undefined,
    });
    const it = pull[Symbol.asyncIterator]();
    const first = it.next();
    await new Promise((r) => setTimeout(r, 300));
    expect(await pending("gated")).toBe(0);
    open = true;
    release();
    expect((await first).done).toBe(false);
    pull.stop();
    await it.return?.();
  });

  it("ends the iteration on stop, with a pull open and no messages left", async () => {
    const c = await consumer("drained");
    const pull = new PacedPull(c, { pullBytes: 1_000_000, expires: 2_000, room: () => Promise.resolve(), onError: () => undefined });
    let n = 0;
    const done = (async () => {
      for await (const m of pull) {
        m.ack();
        n++;
      }
    })();
    while (n < 300) await new Promise((r) => setTimeout(r, 20));
    pull.stop();
    await done;
    expect(n).toBe(300);
  });
});
