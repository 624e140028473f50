import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";
import { DeviceFeed } from "../../actors/device-feed.js";
import type { LogWriter } from "../../src/logs/log-writer.js";

/**
 * What a device gateway sees for every message it sends: a message that cannot land is
 * dead-lettered once, where its people read it, and the feed goes on.
 */
let t: TestStack;
let pid: string;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

beforeAll(async () => {
  t = await startStack();
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
});
afterAll(async () => {
  await t?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ingest = (tail: string) => `${t.config.namespace}.ingest.${tail}`;
const publish = (tail: string, body: unknown) => t.services.nc.publish(ingest(tail), typeof body === "string" ? body : JSON.stringify(body));
const login = (day: number, extra: Record<string, unknown> = {}) => ({ log_type: "user_login", patient_id: pid, timestamp: `2026-07-${String(day).padStart(2, "0")}T08:00:00Z`, payload: {}, ...extra });
/** JSON text of arrays nested `n` deep (JSON.stringify itself would overflow on it). */
const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;

async function eventually<T>(f: () => Promise<T>, ok: (v: T) => boolean, ms = 8_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (ok(v) || Date.now() > end) return v;
    await sleep(50);
  }
}

const letters = async (): Promise<any[]> => (await t.app.inject({ method: "GET", url: "/v1/dead-letters?limit=500", headers: t.auth })).json().dead_letters;
const loggedAt = async (day: number) =>
  ((await t.app.inject({ method: "GET", url: `/v1/state/${pid}/logs?log_types=user_login`, headers: t.auth })).json().logs as { timestamp: string }[]).some((l) => l.timestamp.startsWith(`2026-07-${String(day).padStart(2, "0")}`));

/** The operator's letters (`{ns}.dlq._operator.device_feed`): what no project reads. */
async function operatorLetters(): Promise<any[]> {
  const { jsm, names } = t.services.topology;
  const subject = names.deadLetterSubject("_operator", "device_feed");
  const out: any[] = [];
  const info = await jsm.streams.info(names.deadLetterStream, { subjects_filter: subject });
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const m = await jsm.streams.getMessage(names.deadLetterStream, { seq }).catch(() => null);
    if (m?.subject === subject) out.push(m.json());
  }
  return out;
}

describe("device-feed messages nested thousands deep", () => {
  it("dead-letters each once, wherever the depth is, and keeps the feed going", async () => {
    const before = { ...t.services.deviceFeed!.stats };
    const log = JSON.stringify(login(1)).slice(0, -1);
    const poison = [
      `${log},"trace":{"object_type":"visit","object_id":"v1","more":${deep(10_000)}}}`,
      `${log},"extra":${deep(10_000)}}`,
      `{"logs":[${deep(10_000)}]}`,
      deep(10_000),
    ];
    for (const p of poison) publish("org_default.prj_default", p);
    publish("org_default.prj_default", login(2));
    expect(await eventually(() => loggedAt(2), (ok) => ok)).toBe(true);
    const feed = t.services.deviceFeed!;
    await eventually(async () => feed.stats.dead_lettered - before.dead_lettered, (n) => n >= poison.length);
    // Nothing comes again: one delivery and one letter per message.
    await sleep(1_500);
    expect(feed.stats.received - before.received).toBe(poison.length + 1);
    expect(feed.stats.dead_lettered - before.dead_lettered).toBe(poison.length);
    // Each letter says what is wrong, and keeps what can be said of a message too deep to store.
    const deepOnes = (await letters()).filter((d) => d.message?.unserializable);
    expect(deepOnes.map((d) => d.reason)).toEqual(["invalid_logs", "invalid_logs", "invalid_logs", "invalid_logs"]);
    expect(deepOnes.map((d) => `${d.errors[0].details[0].field} ${d.errors[0].details[0].message}`)).toEqual([
      "message.logs.0.trace nests deeper than 64 levels",
      "message.logs.0.extra nests deeper than 64 levels",
      "message.logs.0 must be an object",
      "message.logs.0 must be an object",
    ]);
    const info = await t.services.topology.jsm.consumers.info(t.services.topology.names.ingestStream, `${t.config.namespace}_device_feed`);
    expect(info.num_redelivered).toBe(0);
  });

  it("letters once, as unprocessable, a message whose processing fails in a way no retry mends", async () => {
    const s = t.services;
    // A writer that overflows its stack on one message, as a recursive step over a deep value would.
    const writer = { writeBatch: async (scope: unknown, raw: unknown[], opts: unknown) => {
      if (JSON.stringify(raw).includes("overflow-me")) throw new RangeError("Maximum call stack size exceeded");
      return (s.logWriter.writeBatch as (...a: unknown[]) => ReturnType<LogWriter["writeBatch"]>)(scope, raw, opts);
    } } as unknown as LogWriter;
    await s.deviceFeed!.stop();
    const feed = new DeviceFeed({ nc: s.nc, js: s.topology.js, jsm: s.topology.jsm, names: s.topology.names, projects: s.projects, orgs: s.orgs, writer, publisher: s.publisher, log: { error: () => undefined } }, `${t.config.namespace}_device_feed`);
    await feed.start();
    try {
      publish("org_default.prj_default", login(3, { trace: "overflow-me" }));
      publish("org_default.prj_default", login(4));
      await eventually(() => loggedAt(4), (ok) => ok);
      await sleep(1_500);
      expect(feed.stats).toMatchObject({ received: 2, dead_lettered: 1, accepted: 1 });
    } finally {
      await feed.stop();
      await s.deviceFeed!.start();
    }
    const mine = (await letters()).filter((d) => d.reason === "unprocessable");
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ message: { trace: "overflow-me" }, errors: [{ code: "unprocessable", message: "the message could not be processed (RangeError): it is not retried" }] });
  });
});

describe("device-feed subjects of the wrong shape", () => {
  it("answers a request on a subject with a missing or extra token with an error a JetStream client raises", async () => {
    const { nc, topology } = t.services;
    const reply = await nc.request(ingest("org_default"), encoder.encode(JSON.stringify(login(5))), { timeout: 2_000 });
    const description = `subject ${ingest("org_default")} has 1 token after ${t.config.namespace}.ingest, not 2: publish to ${t.config.namespace}.ingest.{organization_id}.{project_id} (ids, not slugs); nothing of the message was stored`;
    expect(JSON.parse(decoder.decode(reply.data))).toEqual({ error: { code: 400, description } });
    await expect(topology.js.publish(ingest("org_default.prj_default.extra"), encoder.encode(JSON.stringify(login(5))))).rejects.toThrow(/has 3 tokens after .*, not 2/);
  });

  it("files the letter of a misshapen or wildcard subject in the project, or the organization's default project, it names", async () => {
    publish("org_default", { n: "missing" });
    publish("org_default.prj_default.extra.more", { n: "extra" });
    publish("org_default.*", { n: "wildcard" });
    publish(">", { n: "no organization" });
    const mine = await eventually(letters, (d) => d.filter((x) => x.reason === "invalid_subject" && typeof x.message?.n === "string").length >= 3);
    const bySent = Object.fromEntries(mine.filter((x) => x.reason === "invalid_subject" && typeof x.message?.n === "string").map((x) => [x.message.n, x]));
    expect(Object.keys(bySent).sort()).toEqual(["extra", "missing", "wildcard"]);
    expect(bySent.extra).toMatchObject({ subject: ingest("org_default.prj_default.extra.more"), errors: [{ message: expect.stringContaining("has 4 tokens") }] });
    expect(bySent.wildcard.errors[0].message).toMatch(/does not name an organization and a project by their ids .*no wildcards/);
  });

  it("files what names no organization of the service in the operator's letters only, and goes on", async () => {
    publish("org_nope.prj_nope", login(6));
    publish("*.*", login(6));
    publish("org_default.prj_default", login(7));
    await eventually(() => loggedAt(7), (ok) => ok);
    const ops = await eventually(operatorLetters, (l) => l.length >= 3);
    expect(ops.map((l) => l.subject)).toEqual(expect.arrayContaining([ingest("org_nope.prj_nope"), ingest("*.*"), `${t.config.namespace}.ingest.>`]));
    expect(ops.find((l) => l.subject === ingest("org_nope.prj_nope")).errors[0].message).toBe("organization org_nope not found: the subject takes the organization's id; nothing of the message was stored");
    // The project's own letters hold none of them.
    expect((await letters()).map((l) => l.subject)).not.toContain(ingest("org_nope.prj_nope"));
  });

  it("points a gateway that named a project by its slug at the project's id", async () => {
    const slug = (await t.app.inject({ method: "GET", url: "/v1/projects/prj_default", headers: t.auth })).json().slug as string;
    publish(`org_default.${slug}`, login(8));
    const d = await eventually(letters, (l) => l.some((x) => x.subject === ingest(`org_default.${slug}`)));
    const letter = d.find((x) => x.subject === ingest(`org_default.${slug}`));
    expect(letter).toMatchObject({ reason: "project_not_found", errors: [{ message: `project ${slug} not found in organization org_default; "${slug}" is the slug of project prj_default: the subject takes the project's id; nothing of the message was stored` }] });
  });
});
