/**
 * What one JetStream message costs against what it carries: 120,000 logs published by the
 * service's own publisher (infra/nats/jetstream-publisher.ts, no Nats-Msg-Id, as the write
 * path publishes) one log a message on a per-patient subject, six a message (100 patients
 * of a batch over 16 partitions), and a hundred, with about 3,200 logs in flight; prints
 * nats-server's and this client's CPU per log. A part's figure: no HTTP, no ledger, no consumers.
 *
 *   npx tsx bench/nats-message-cost.ts
 */
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { natsServerCpu } from "./support.js";
import { freshStream, inFlight, SAMPLE_LOG } from "./jetstream-load.js";
import { createJetStreamPublisher } from "../infra/nats/jetstream-publisher.js";

const nc = await connect({ servers: "127.0.0.1:4222" });
const jsm = await jetstreamManager(nc);
const pub = createJetStreamPublisher(nc, { timeoutMs: 10_000 });
const log = JSON.stringify(SAMPLE_LOG);
for (const [mode, perMsg] of [["one log a message, per-patient subject", 1], ["6 logs a message, partition subject", 6], ["100 logs a message", 100]] as const) {
  const name = `nbtest${perMsg}`;
  await freshStream(jsm, name, [`nb${perMsg}.>`]);
  const total = 120_000;
  const body = new TextEncoder().encode(`{"logs":[${Array.from({ length: perMsg }, () => log).join(",")}]}`);
  const messages = total / perMsg;
  const inflight = Math.max(1, Math.floor(3200 / perMsg));
  const n0 = natsServerCpu();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await inFlight(messages, inflight, (i) => pub.publish(perMsg === 1 ? `nb${perMsg}.p.${i % 16}.pat${i % 10000}` : `nb${perMsg}.p.${i % 16}`, body));
  const s = (performance.now() - t0) / 1000;
  const nats = natsServerCpu() - n0;
  const c = process.cpuUsage(c0);
  console.log(JSON.stringify({ mode, logs_per_s: Math.round(total / s), nats_us_per_log: +((nats * 1e6) / total).toFixed(1), client_us_per_log: +(((c.user + c.system)) / total).toFixed(1), msg_bytes: body.length }));
  await jsm.streams.delete(name);
}
pub.close();
await nc.close();
