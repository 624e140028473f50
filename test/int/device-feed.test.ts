import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";
import { DeviceFeed } from "../../actors/device-feed.js";

let t: TestStack;
let pid: string;
beforeAll(async () => {
  t = await startStack();
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
});
afterAll(async () => {
  await t?.close();
});

const publish = (org: string, project: string, body: unknown) =>
  t.services.nc.publish(t.services.topology.names.ingestSubject(org, project), typeof body === "string" ? body : JSON.stringify(body));

async function eventually<T>(f: () => Promise<T>, ok: (v: T) => boolean, ms = 5_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const deadLetters = async () => (await t.app.inject({ method: "GET", url: "/v1/dead-letters", headers: t.auth })).json();

describe("device feed on NATS", () => {
  it("treats a valid envelope exactly like the batch route: stored and applied to state", async () => {
    publish("org_default", "prj_default", { log_type: "spo2_reading", patient_id: pid, timestamp: "2026-06-01T07:00:00Z", payload: { spo2_percent: 96, sensor_timestamp: "2026-06-01T07:00:00Z", device_provider: "acme" } });
    const heart = await eventually(
      async () => (await t.app.inject({ method: "GET", url: `/v1/state/${pid}/event-modules/heart`, headers: t.auth })).json(),
      (h) => h.updated_at !== null,
    );
    expect(heart.updated_at).toBe("2026-06-01T07:00:00.000Z");
  });

  it("keeps the keys it makes for keyless logs apart from a client's key that reads the same", async () => {
    const { jsm, names } = t.services.topology;
    const next = (await jsm.streams.info(names.ingestStream)).state.last_seq + 1;
    const spo2 = (timestamp: string, extra: Record<string, unknown> = {}) => ({
      log_type: "spo2_reading", patient_id: pid, timestamp, payload: { spo2_percent: 95, sensor_timestamp: timestamp }, ...extra,
    });
    const client = await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: [spo2("2026-06-02T07:00:00Z", { idempotency_key: `ingest:${next}:0` })] } });
    expect(client.json().results[0].status).toBe("accepted");
    publish("org_default", "prj_default", spo2("2026-06-03T07:00:00Z"));
    const logs = await eventually(
      async () => (await t.app.inject({ method: "GET", url: `/v1/state/${pid}/logs?log_types=spo2_reading`, headers: t.auth })).json().logs as { timestamp: string }[],
      (l) => l.some((x) => x.timestamp === "2026-06-03T07:00:00.000Z"),
    );
    expect(logs.map((x) => x.timestamp)).toEqual(expect.arrayContaining(["2026-06-02T07:00:00.000Z", "2026-06-03T07:00:00.000Z"]));
    // A NUL, which generated keys start with in the ledger, is refused in a client's key.
    const nul = await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: [spo2("2026-06-04T07:00:00Z", { idempotency_key: "\u0000generated:x" })] } });
    expect(nul.json().errors[0].code).toBe("validation_error");
  });

  it("moves an invalid log to the dead-letter stream with its located errors, and keeps the valid ones", async () => {
    publish("org_default", "prj_default", {
      logs: [
        { log_type: "spo2_reading", patient_id: pid, timestamp: "2026-06-02T07:00:00Z", payload: { spo2_percent: 140 } },
        { log_type: "user_login", patient_id: pid, timestamp: "2026-06-02T07:00:00Z", payload: {} },
      ],
    });
    const dl = await eventually(deadLetters, (d) => d.count >= 1);
    const letter = dl.dead_letters.find((d: any) => d.reason === "invalid_logs");
    expect(letter.errors[0]).toMatchObject({ index: 0, code: "validation_error" });
    expect(letter.errors[0].details[0]).toMatchObject({ location: ["message", "logs", 0, "payload", "spo2_percent"], input_value: 140 });
    const engagement = await eventually(
      async () => (await t.app.inject({ method: "GET", url: `/v1/state/${pid}/event-modules/engagement`, headers: t.auth })).json(),
      (e) => e.updated_at !== null,
    );
    expect(engagement.updated_at).toBe("2026-06-02T07:00:00.000Z");
  });

  it("dead-letters messages that are not JSON or name an unknown project of the organization, without stopping the feed", async () => {
    publish("org_default", "prj_default", "{not json");
    publish("org_default", "prj_nope", { log_type: "user_login", patient_id: pid, timestamp: "2026-06-03T00:00:00Z", payload: {} });
    const dl = await eventually(deadLetters, (d) => d.dead_letters.some((x: any) => x.reason === "project_not_found"));
    expect(dl.dead_letters.map((d: any) => d.reason)).toContain("invalid_json");
    // The unknown project's letter goes to the organization's default project, which its people read.
    const lost = dl.dead_letters.find((d: any) => d.reason === "project_not_found");
    expect(lost.errors[0].message).toBe("project prj_nope not found in organization org_default; nothing of the message was stored");
  });

  it("dead-letters a message holding a number too large for a double (1e400) at its place, storing none of it", async () => {
    const log = (x: string, day: string) => `{"log_type":"memory_report","patient_id":"${pid}","timestamp":"2026-06-${day}T07:00:00Z","payload":{"content":"feed","extensions":{"x":${x}}}}`;
    publish("org_default", "prj_default", `{"logs":[${log("1", "10")},${log("1e400", "11")}]}`);
    publish("org_default", "prj_default", log("2", "12"));
    const dl = await eventually(deadLetters, (d) => d.dead_letters.some((x: any) => x.errors[0]?.message.includes("finite")));
    const letter = dl.dead_letters.find((x: any) => x.errors[0]?.message.includes("finite"));
    expect(letter).toMatchObject({ reason: "invalid_json", message: expect.stringContaining("1e400") });
    expect(letter.errors[0].message).toBe("message.logs.1.payload.extensions.x is a number too large to represent (it would read as infinity): send a finite number; nothing of the message was stored");
    // The message after it is taken; none of the refused one is.
    const logs = await eventually(
      async () => (await t.app.inject({ url: `/v1/state/${pid}/logs?log_types=memory_report`, headers: t.auth })).json().logs as { timestamp: string }[],
      (l) => l.length > 0,
    );
    expect(logs.map((l) => l.timestamp)).toEqual(["2026-06-12T07:00:00.000Z"]);
  });

  it("dead-letters a message whose letter would be over NATS's message limit, cut to fit, instead of retrying it forever", async () => {
    const bad = Array.from({ length: 3_000 }, (_, i) => ({ log_type: "user_login", patient_id: pid, timestamp: "2026-03-01T10:00:00", payload: {}, trace: `t${i}` }));
    publish("org_default", "prj_default", { logs: bad });
    publish("org_default", "prj_default", '"'.repeat(600_000));
    const dl = await eventually(deadLetters, (d) => d.dead_letters.filter((x: any) => x.truncated).length >= 2);
    const [logs, text] = dl.dead_letters.filter((x: any) => x.truncated);
    expect(logs).toMatchObject({ reason: "invalid_logs", errors_total: 3_000 });
    expect(logs.errors).toHaveLength(100);
    expect(text).toMatchObject({ reason: "invalid_json", message: { bytes: 600_000 } });
    expect(text.message.head).toHaveLength(64 * 1024);
  });

  it("refuses dead letters to a patient token: they hold every patient's payloads", async () => {
    const token = (await t.app.inject({ method: "POST", url: "/v1/auth/token", headers: t.auth, payload: { patient_id: pid } })).json().access_token;
    const r = await t.app.inject({ method: "GET", url: "/v1/dead-letters", headers: { authorization: `Bearer ${token}` } });
    expect(r.statusCode).toBe(403);
  });

  it("pages dead letters with a cursor", async () => {
    const first = (await t.app.inject({ method: "GET", url: "/v1/dead-letters?limit=1", headers: t.auth })).json();
    expect(first.count).toBe(1);
    expect(first.next_cursor).not.toBeNull();
    const next = (await t.app.inject({ method: "GET", url: `/v1/dead-letters?limit=1&cursor=${first.next_cursor}`, headers: t.auth })).json();
    expect(next.dead_letters[0].id).not.toBe(first.dead_letters[0].id);
  });

  it("files one letter for a message delivered again after a crash between its letter and its ack", async () => {
    const s = t.services;
    const trace = `again-${Date.now()}`;
    const letters = s.topology.names.deadLetterSubject("org_default", "prj_default");
    // The feed's process dies right after storing the letter, before the ack: the message comes again.
    let crash = true;
    const publisher = {
      publish: async (subject: string, data: Uint8Array, o?: Parameters<typeof s.publisher.publish>[2]) => {
        const ack = await s.publisher.publish(subject, data, o);
        if (crash && subject === letters) {
          crash = false;
          throw new Error("killed before the ack");
        }
        return ack;
      },
      close: () => undefined,
    };
    await s.deviceFeed!.stop();
    const feed = new DeviceFeed({ nc: s.nc, js: s.topology.js, jsm: s.topology.jsm, names: s.topology.names, projects: s.projects, orgs: s.orgs, writer: s.logWriter, publisher, log: { error: () => undefined } }, `${t.config.namespace}_device_feed`);
    await feed.start();
    try {
      publish("org_default", "prj_default", { log_type: "spo2_reading", patient_id: pid, timestamp: "2026-06-05T07:00:00Z", payload: { spo2_percent: 140 }, trace });
      await eventually(async () => feed.stats.dead_lettered, (n) => n >= 1, 8_000);
    } finally {
      await feed.stop();
      await s.deviceFeed!.start();
    }
    expect(crash).toBe(false);
    const mine = (await deadLetters()).dead_letters.filter((x: any) => x.message?.trace === trace);
    expect(mine).toHaveLength(1);
  });
});
