import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../../support/stack.js";
import { def, expectSdkParses, opt, req, SDK_LOG_ENTRY, sdkClient, sdkOutcome, type SdkClient, type Shape } from "../../support/olira-sdk.js";

/** Module times as the SDK's module models read them. */
const TIMES: Shape = { created_at: opt("string"), updated_at: opt("string") };
const STABLE_RESULT: Shape = {
  patient_id: req("string"),
  modules: req("object", { of: { module_type: req("string"), payload: opt("object"), ...TIMES } }),
};
const EVENT_MODULE_LIST: Shape = { modules: def("list", { of: { module_type: req("string"), ...TIMES } }) };
const EVENT_MODULE: Shape = { patient_id: req("string"), module_type: req("string"), payload: opt("any"), ...TIMES };
const VIEW_LIST: Shape = { views: def("list", { of: { view_type: req("string"), view_id: req("string"), has_blocks: def("bool"), has_temp: def("bool") } }) };
const BLOCK_LIST: Shape = {
  patient_id: req("string"),
  view_type: req("string"),
  blocks: def("list", { of: { block_id: opt("string"), block_name: opt("string"), has_result: def("bool") } }),
};
const VIEW: Shape = {
  patient_id: req("string"),
  view_type: req("string"),
  view_id: opt("string"),
  valid_from: opt("string"),
  valid_to: opt("string"),
  content: def("object"),
};
const VIEW_BLOCK: Shape = {
  patient_id: req("string"),
  view_type: req("string"),
  block_id: req("string"),
  content: opt("string"),
  confidences: opt("object", { of: "number" }),
  updated_at: opt("string"),
};
const RECENT: Shape = {
  patient_id: req("string"),
  view_type: req("string"),
  entries: def("list", { of: "string" }),
  count: def("int"),
  total_count: def("int"),
};
const LOGS: Shape = {
  patient_id: req("string"),
  count: req("int"),
  logs: def("list", { of: SDK_LOG_ENTRY }),
};
const EVENTS: Shape = {
  patient_id: req("string"),
  count: req("int"),
  events: def("list", {
    of: {
      id: req("string"),
      trigger: opt("string"),
      log_type: opt("string"),
      status: opt("string"),
      triggered_at: opt("string"),
      completed_at: opt("string"),
      source_event_log_id: opt("string"),
      log_payload: opt("object"),
      changes: opt("list", { of: "object" }),
    },
  }),
};
const MEMORIES: Shape = {
  patient_id: req("string"),
  count: req("int"),
  results: def("list", {
    of: { memory_id: req("string"), content: req("string"), metadata: opt("object"), created_at: opt("string"), updated_at: opt("string") },
  }),
};

let t: TestStack;
let sdk: SdkClient;
let pid: string;
let other: string;
/** Log ids by name, in the order sent. */
const ids: Record<string, string> = {};
const state = (rest: string) => `/v1/state/${pid}${rest}`;

beforeAll(async () => {
  t = await startStack();
  sdk = sdkClient(t.app, t.adminKey);
  const patient = async (timezone: string) => (await sdk.post("/v1/patients", { sex: "unknown", timezone, external_identifiers: [] })).json().id as string;
  // New York is UTC-5 in November: the one-line entries print its local time.
  [pid, other] = [await patient("America/New_York"), await patient("UTC")];
  const conv1 = { object_type: "conversation", object_id: "conv-1" };
  const logs: [string, Record<string, unknown>][] = [
    ["pain", { log_type: "symptom_report", timestamp: "2026-11-21T14:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 7 }] }, trace: conv1 }],
    ["mood", { log_type: "moods_report", timestamp: "2026-11-22T15:30:00Z", payload: { moods: [{ mood: "anxious", intensity: 6 }] }, trace: "visit-9" }],
    ["worry", { log_type: "memory_report", timestamp: "2026-11-20T12:00:00Z", payload: { content: "Worried about the CHEMO schedule" }, trace: conv1, metadata: { agent: "nurse-bot" } }],
    ["garden", { log_type: "memory_report", timestamp: "2026-11-23T12:00:00Z", payload: { content: "Enjoys gardening on weekends", type: "interests_concerns" } }],
    ["talk", { log_type: "conversation_completed", timestamp: "2026-11-22T18:00:00Z", payload: { conversation_id: "conv-1", channel: "voice", transcript: "I feel tired after chemo." }, trace: conv1 }],
    ["hb", { log_type: "lab_results_received", timestamp: "2026-11-19T10:00:00Z", payload: { results: [{ loinc_code: "718-7", test_name: "Hemoglobin", value_numeric: 9.1, unit: "g/dL", abnormal_flag: "L" }] }, trace: { object_type: "order", object_id: "conv-1" } }],
    ["login", { log_type: "user_login", timestamp: "2026-11-18T10:00:00Z", payload: {} }],
    ["prefs", { log_type: "preferences", timestamp: "2026-11-18T10:30:00Z", payload: { tone: "warm" } }],
    // Writes no field: applied, yet no module changes (no_change).
    ["same", { log_type: "preferences", timestamp: "2026-11-18T11:00:00Z", payload: {} }],
  ];
  const r = await sdk.post("/v1/logs/batch", { logs: logs.map(([, l]) => ({ patient_id: pid, ...l })) });
  expect(r.json()).toMatchObject({ accepted: logs.length, failed: 0 });
  r.json().results.forEach((x: { id: string }, i: number) => (ids[logs[i]![0]] = x.id));
  const o = await sdk.post("/v1/logs/batch", { logs: [{ log_type: "memory_report", patient_id: other, timestamp: "2026-11-21T08:00:00Z", payload: { content: "Other patient's memory" } }] });
  expect(o.json()).toMatchObject({ accepted: 1 });
});
afterAll(async () => {
  await t?.close();
});

describe("the SDK's state reads (olira-compat §5)", () => {
  it("get_stable_data answers modules keyed by type, all of them or those sent comma-joined", async () => {
    const all = await sdk.get(state("/stable"));
    expect(all.statusCode).toBe(200);
    expectSdkParses(all.json(), STABLE_RESULT);
    expect(all.json().modules.user_preferences.module_type).toBe("user_preferences");
    const some = (await sdk.get(state("/stable"), { modules: ["demographics", "user_preferences"] })).json();
    expectSdkParses(some, STABLE_RESULT);
    expect(Object.keys(some.modules)).toEqual(["user_preferences"]);
  });

  it("list and get_event_state_module answer what the SDK parses, and behavioral_state reads emotional_state", async () => {
    const list = (await sdk.get(state("/event-modules"))).json();
    expectSdkParses(list, EVENT_MODULE_LIST);
    expect(list.modules.map((m: { module_type: string }) => m.module_type)).toEqual(expect.arrayContaining(["symptoms", "emotional_state", "lab_results"]));
    const symptoms = (await sdk.get(state("/event-modules/symptoms"))).json();
    expectSdkParses(symptoms, EVENT_MODULE);
    const renamed = await sdk.get(state("/event-modules/behavioral_state"));
    expect(renamed.statusCode).toBe(200);
    expectSdkParses(renamed.json(), EVENT_MODULE);
    expect(renamed.json()).toEqual((await sdk.get(state("/event-modules/emotional_state"))).json());
    expect(renamed.json().payload.moods[0].mood).toBe("anxious");
    expect(sdkOutcome((await sdk.get(state("/event-modules/horoscope"))).statusCode)).toBe("validation");
  });

  it("list_views and list_view_blocks answer what the SDK parses", async () => {
    const views = (await sdk.get(state("/views"))).json();
    expectSdkParses(views, VIEW_LIST);
    expect(views.views.find((v: { view_type: string }) => v.view_type === "symptom_snapshot")).toMatchObject({ has_blocks: true });
    const blocks = (await sdk.get(state("/views/symptom_snapshot/blocks"))).json();
    expectSdkParses(blocks, BLOCK_LIST);
    expect(blocks.blocks.some((b: { has_result: boolean }) => b.has_result)).toBe(true);
  });

  it("get_view (no format sent) answers raw JSON whose blocks also carry template_ref.block_id and result {id, name, content}", async () => {
    const r = await sdk.get(state("/views/symptom_snapshot"));
    expect(r.headers["content-type"]).toMatch(/^application\/json/);
    const view = r.json();
    expectSdkParses(view, VIEW);
    const blocks = [...view.content.blocks, ...view.content.temp];
    expect(blocks.length).toBeGreaterThan(0);
    for (const b of blocks) {
      expect(b.template_ref).toEqual({ block_id: b.id });
      expect(b.result).toEqual({ id: b.id, name: b.name, content: b.text });
      expect(typeof b.result.content).toBe("string");
    }
    // The same answer when the view comes from its stored copy (a second read).
    expect((await sdk.get(state("/views/symptom_snapshot"))).json()).toEqual(view);
  });

  it("get_view_block answers its content as a string", async () => {
    const block = (await sdk.get(state("/views/symptom_snapshot/blocks/active_symptoms"))).json();
    expectSdkParses(block, VIEW_BLOCK);
    expect(block.content).toContain("pain");
  });

  it("get_view_recent_events answers entries as one-line strings in the patient's time zone, the objects under items", async () => {
    const r = (await sdk.get(state("/views/symptom_snapshot/recent"), { limit: 50 })).json();
    expectSdkParses(r, RECENT);
    expect(r.entries).toEqual(["2026-11-22 10:30 — mood_report: anxious 6/10", "2026-11-21 09:00 — symptom_report: pain 7/10 (esas_r)"]);
    expect(r).toMatchObject({ count: 2, total_count: 2 });
    expect(r.items).toEqual([
      { timestamp: "2026-11-22T15:30:00.000Z", module_type: "emotional_state", kind: "mood_report", summary: "anxious 6/10", log_id: ids.mood },
      { timestamp: "2026-11-21T14:00:00.000Z", module_type: "symptoms", kind: "symptom_report", summary: "pain 7/10 (esas_r)", log_id: ids.pain },
    ]);
    const one = (await sdk.get(state("/views/symptom_snapshot/recent"), { limit: 1 })).json();
    expect(one).toMatchObject({ entries: [r.entries[0]], items: [r.items[0]], count: 1, total_count: 2 });
  });

  it("get_logs answers every trace as an object or null, the limit always sent", async () => {
    const r = await sdk.get(state("/logs"), { limit: 50 });
    expectSdkParses(r.json(), LOGS);
    const logs = r.json().logs as { id: string; trace: unknown }[];
    expect(r.json().count).toBe(9);
    const trace = (name: string) => logs.find((l) => l.id === ids[name])!.trace;
    expect(trace("pain")).toEqual({ object_type: "conversation", object_id: "conv-1" });
    expect(trace("mood")).toEqual({ object_type: null, object_id: "visit-9" });
    expect(trace("login")).toBeNull();
  });

  it("get_logs filters by event_types (legacy names too), trace_type, trace_id and since", async () => {
    const names = async (query: Record<string, string | number | string[]>) => {
      const r = await sdk.get(state("/logs"), { limit: 50, ...query });
      expect(r.statusCode).toBe(200);
      expectSdkParses(r.json(), LOGS);
      return (r.json().logs as { id: string }[]).map((l) => Object.keys(ids).find((k) => ids[k] === l.id)).sort();
    };
    expect(await names({ event_types: ["moods_report", "lab_results_received", "memory_report"] })).toEqual(["garden", "hb", "mood", "worry"]);
    // Our own name for the same filter, given too: logs of either list.
    expect(await names({ event_types: ["moods_report"], log_types: ["lab_results"] })).toEqual(["hb", "mood"]);
    expect(await names({ trace_type: "conversation", trace_id: "conv-1" })).toEqual(["pain", "talk", "worry"]);
    expect(await names({ trace_id: "conv-1" })).toEqual(["hb", "pain", "talk", "worry"]);
    expect(await names({ trace_type: "order" })).toEqual(["hb"]);
    // A string trace is an id of no type.
    expect(await names({ trace_id: "visit-9" })).toEqual(["mood"]);
    expect(await names({ trace_type: "visit" })).toEqual([]);
    expect(await names({ event_types: ["symptom_report"], trace_type: "conversation", since: "2026-11-21T00:00:00Z" })).toEqual(["pain"]);
    const typo = await sdk.get(state("/logs"), { limit: 50, event_types: ["symptom_reprot"] });
    expect(sdkOutcome(typo.statusCode)).toBe("validation");
    expect(typo.json().details[0]).toMatchObject({ location: ["query", "event_types"] });
  });

  it("get_events with its default status=complete answers every applied log, no_change ones included", async () => {
    const r = await sdk.get(state("/events"), { status: "complete", limit: 50 });
    expect(r.statusCode).toBe(200);
    expectSdkParses(r.json(), EVENTS);
    const events = r.json().events as { source_event_log_id: string; status: string; changes: unknown[] }[];
    expect(r.json().count).toBe(9);
    expect(new Set(events.map((e) => e.source_event_log_id))).toEqual(new Set(Object.values(ids)));
    expect(events.find((e) => e.source_event_log_id === ids.same)).toMatchObject({ status: "no_change", changes: [] });
    expect(events.find((e) => e.source_event_log_id === ids.pain)!.status).toBe("applied");
    const applied = (await sdk.get(state("/events"), { status: "applied", limit: 50 })).json();
    expect(applied.events.map((e: { source_event_log_id: string }) => e.source_event_log_id)).not.toContain(ids.same);
    expect(applied.count).toBe(events.filter((e) => e.status === "applied").length);
  });

  it("get_events answers pending and failed with no events, never a 422", async () => {
    for (const status of ["pending", "failed"]) {
      const r = await sdk.get(state("/events"), { status, limit: 50 });
      expect(r.statusCode).toBe(200);
      expectSdkParses(r.json(), EVENTS);
      expect(r.json()).toMatchObject({ count: 0, events: [] });
    }
    expect(sdkOutcome((await sdk.get(state("/events"), { status: "finished", limit: 50 })).statusCode)).toBe("validation");
  });

  it("get_events filters by log_type (legacy names too), trace_type, trace_id and since", async () => {
    const sources = async (query: Record<string, string>) => {
      const r = await sdk.get(state("/events"), { status: "complete", limit: 50, ...query });
      expect(r.statusCode).toBe(200);
      expectSdkParses(r.json(), EVENTS);
      return (r.json().events as { source_event_log_id: string }[]).map((e) => Object.keys(ids).find((k) => ids[k] === e.source_event_log_id)).sort();
    };
    expect(await sources({ log_type: "moods_report" })).toEqual(["mood"]);
    expect(await sources({ log_type: "conversation_completed" })).toEqual(["talk"]);
    expect(await sources({ trace_type: "conversation", trace_id: "conv-1" })).toEqual(["pain", "talk", "worry"]);
    expect(await sources({ log_type: "memory_report", trace_id: "conv-1" })).toEqual(["worry"]);
    expect(await sources({ trace_id: "visit-9" })).toEqual(["mood"]);
    expect(await sources({ since: "2999-01-01T00:00:00Z" })).toEqual([]);
    expect(sdkOutcome((await sdk.get(state("/events"), { status: "complete", limit: 50, log_type: "horoscope" })).statusCode)).toBe("validation");
  });

  it("answers an unknown patient with a 404, which the SDK raises as its validation error", async () => {
    for (const path of ["/stable", "/views", "/logs", "/events", "/memories", "/views/symptom_snapshot/recent"]) {
      // limit where the SDK sends one (list_views and get_stable_data send none).
      const r = await sdk.get(`/v1/state/pat_00000000000000000000000000${path}`, path === "/stable" || path === "/views" ? undefined : { limit: 50 });
      expect(r.statusCode).toBe(404);
      expect(sdkOutcome(r.statusCode)).toBe("validation");
    }
  });
});

describe("the SDK's read_memories (olira-compat §6)", () => {
  it("lists memory reports and conversation summaries once each, newest first, with the SDK's default limit", async () => {
    const r = await sdk.get(state("/memories"), { limit: 100 });
    expect(r.statusCode).toBe(200);
    expectSdkParses(r.json(), MEMORIES);
    const body = r.json();
    expect(body).toMatchObject({ patient_id: pid, count: 3 });
    expect(body.results.map((m: { memory_id: string }) => m.memory_id)).toEqual([ids.garden, ids.talk, ids.worry]);
    const [garden, talk, worry] = body.results;
    expect(garden).toMatchObject({
      content: "Enjoys gardening on weekends", created_at: "2026-11-23T12:00:00.000Z",
      metadata: { origin: "memory_report", type: "interests_concerns", type_source: "client", conversation_id: null },
    });
    expect(talk.content).toContain("I feel tired after chemo.");
    expect(talk).toMatchObject({
      created_at: "2026-11-22T18:00:00.000Z",
      metadata: { origin: "conversation", type: "conversation_summary", conversation_id: "conv-1", trace: { object_type: "conversation", object_id: "conv-1" } },
    });
    expect(worry.metadata).toMatchObject({ origin: "memory_report", type_source: "auto", log_metadata: { agent: "nurse-bot" } });
    // updated_at is when the log was accepted: GET /logs's ingested_at for the same log.
    const logs = (await sdk.get(state("/logs"), { limit: 50 })).json().logs as { id: string; ingested_at: string }[];
    for (const m of body.results) expect(m.updated_at).toBe(logs.find((l) => l.id === m.memory_id)!.ingested_at);
  });

  it("keeps the memories whose content contains the query in any case, and honours limit", async () => {
    const chemo = (await sdk.get(state("/memories"), { limit: 100, query: "chemo" })).json();
    expectSdkParses(chemo, MEMORIES);
    expect(chemo.results.map((m: { memory_id: string }) => m.memory_id)).toEqual([ids.talk, ids.worry]);
    expect((await sdk.get(state("/memories"), { limit: 100, query: "ZEBRA" })).json()).toMatchObject({ count: 0, results: [] });
    const one = (await sdk.get(state("/memories"), { limit: 1 })).json();
    expect(one).toMatchObject({ count: 1, results: [{ memory_id: ids.garden }] });
  });

  it("answers a patient token for its own patient, and 404 for another patient", async () => {
    const minted = (await sdk.post("/v1/auth/token", { patient_id: pid })).json();
    const asPatient = sdkClient(t.app, minted.access_token);
    const own = await asPatient.get(state("/memories"), { limit: 100 });
    expect(own.statusCode).toBe(200);
    expectSdkParses(own.json(), MEMORIES);
    expect(own.json().count).toBe(3);
    const theirs = await asPatient.get(`/v1/state/${other}/memories`, { limit: 100 });
    expect(theirs.statusCode).toBe(404);
    expect((await sdk.get(`/v1/state/${other}/memories`, { limit: 100 })).json().results.map((m: { content: string }) => m.content)).toEqual(["Other patient's memory"]);
  });

  it("is recorded in the audit trail like the other state reads", async () => {
    expect((await sdk.get(state("/memories"), { limit: 5 })).statusCode).toBe(200);
    const until = Date.now() + 5_000;
    let entries: { route: string; method: string; patient_id: string; status: number }[] = [];
    while (Date.now() < until) {
      entries = (await t.app.inject({ method: "GET", url: `/v1/audit?patient_id=${pid}`, headers: t.auth })).json().entries;
      if (entries.some((e) => e.route === "/v1/state/:pid/memories")) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(entries.find((e) => e.route === "/v1/state/:pid/memories")).toMatchObject({ method: "GET", patient_id: pid, status: 200 });
  });
});
