import { randomBytes } from "node:crypto";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectNats } from "../../infra/nats/connection.js";
import { JsonKv } from "../../infra/nats/json-kv.js";
import { destroyTopology, ensureTopology } from "../../infra/nats/topology.js";
import { newJobRecord } from "../../src/ingestion/job-record.js";
import { JobStore, StaleJobWriteError } from "../../src/ingestion/job-store.js";

// The store alone on a namespace of its own: no service, so no lease holder writes meanwhile.
const ns = `t${randomBytes(5).toString("hex")}`;
let nc: NatsConnection;
let store: JobStore;

beforeAll(async () => {
  nc = await connectNats("nats://127.0.0.1:4222");
  const topology = await ensureTopology(nc, ns);
  store = new JobStore(new JsonKv(topology.kv.ingestionJobs), new JsonKv(topology.kv.ingestionKeys));
});

afterAll(async () => {
  await destroyTopology(nc, ns);
  await nc.close();
});

describe("job saves fenced on the jobs lease epoch", () => {
  it("refuse a runner of an earlier tenure once a later one has written the job, and keep what the later one wrote", async () => {
    const record = newJobRecord(
      { job_id: "job_fence1", organization_id: "org_default", project_id: "prj_fence", require_confirmation: true, rollback_on_cancel: false, idempotency_key: null, summary_types: null, source: { object: "inline/x", inline: true, bytes: 1 } },
      new Date().toISOString(),
    );
    await store.create(record);
    // The first tenure runs the job to the review.
    await store.put({ record: { ...record, status: "awaiting_confirmation" }, snapshot: "first" }, 10);
    // A later tenure takes it over and finishes it.
    await store.put({ record: { ...record, status: "completed" }, snapshot: "second" }, 42);
    // The first runner, woken from a pause, saves what it held: refused.
    await expect(store.put({ record: { ...record, status: "awaiting_confirmation" }, snapshot: "first" }, 10)).rejects.toBeInstanceOf(StaleJobWriteError);
    const kept = await store.getStored("prj_fence", "job_fence1");
    expect(kept).toMatchObject({ record: { status: "completed" }, snapshot: "second", epoch: 42 });
    // The same tenure writes again, and a later one over it.
    await store.put({ record: { ...record, status: "completed" }, snapshot: "second again" }, 42);
    await store.put({ record: { ...record, status: "completed" }, snapshot: "third" }, 43);
    expect((await store.getStored("prj_fence", "job_fence1"))?.epoch).toBe(43);
  });
});
