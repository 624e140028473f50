import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { startStack, type TestStack } from "../support/stack.js";
import { callTool, connectMcp } from "../support/mcp-client.js";

/**
 * State at a past time, through the real service: a patient whose logs came in two
 * batches, the second holding a late log older than some of the first.
 */
let t: TestStack;
let base: string;
let pid: string;
let client: Client;
/** Between the two batches' acceptance. */
let between: string;
let first: string[];
let second: string[];

const BETWEEN_EVENTS = "2026-07-02T12:00:00Z";

beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "10" });
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
  const send = async (logs: unknown[]) => (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } })).json().results.map((r: { id: string }) => r.id);
  first = await send([
    { log_type: "symptom_report", patient_id: pid, timestamp: "2026-07-01T08:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 8 }] } },
    { log_type: "medication_list_update", patient_id: pid, timestamp: "2026-07-01T09:00:00Z", payload: { medications: [{ action: "add", medication_name: "Metformin", rxnorm_cui: "860975", dose: "500 mg" }] } },
    { log_type: "lab_results", patient_id: pid, timestamp: "2026-07-03T07:00:00Z", payload: { results: [{ loinc_code: "2345-7", test_name: "Glucose", value_numeric: 210, unit: "mg/dL", abnormal_flag: "H" }] } },
  ]);
  await new Promise((r) => setTimeout(r, 20));
  between = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 20));
  second = await send([
    { log_type: "symptom_report", patient_id: pid, timestamp: "2026-07-05T08:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 3 }] } },
    // Late: its event time lies before the lab of the first batch.
    { log_type: "symptom_report", patient_id: pid, timestamp: "2026-07-02T08:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "nausea", score: 5 }] } },
    { log_type: "medication_list_update", patient_id: pid, timestamp: "2026-07-04T09:00:00Z", payload: { medications: [{ action: "update", medication_name: "Metformin", rxnorm_cui: "860975", dose: "1000 mg" }] } },
  ]);
  client = await connectMcp(base, t.adminKey);
});
afterAll(async () => {
  await client?.close();
  await t?.close();
});

const get = (url: string) => t.app.inject({ method: "GET", url, headers: t.auth });
const symptoms = async (query: string) => (await get(`/v1/state/${pid}/event-modules/symptoms?${query}`)).json();
const names = (m: { payload: { symptoms: { name: string; current_score: number }[] } }) => Object.fromEntries(m.payload.symptoms.map((s) => [s.name, s.current_score]));

describe("state reads at a past time over REST", () => {
  it("as_of folds the logs up to that event time, the late log included", async () => {
    const r = await symptoms(`as_of=${BETWEEN_EVENTS}`);
    expect(r).toMatchObject({ patient_id: pid, as_of: "2026-07-02T12:00:00.000Z", known_at: null, module_type: "symptoms" });
    expect(names(r)).toEqual({ pain: 8, nausea: 5 });
    const labs = (await get(`/v1/state/${pid}/event-modules/lab_results?as_of=2026-07-02`)).json();
    expect(labs).toMatchObject({ as_of: "2026-07-02T00:00:00.000Z", created_at: null, payload: { results: [] } });
  });

  it("known_at leaves out what was accepted later: the late log is not known before its acceptance", async () => {
    const r = await symptoms(`known_at=${between}`);
    expect(r).toMatchObject({ as_of: null, known_at: between });
    expect(names(r)).toEqual({ pain: 8 });
    const both = await symptoms(`as_of=${BETWEEN_EVENTS}&known_at=${between}`);
    expect(names(both)).toEqual({ pain: 8 });
    const meds = (await get(`/v1/state/${pid}/stable?modules=medications&known_at=${between}`)).json();
    expect(meds.modules.medications.payload.medications[0].dose).toBe("500 mg");
  });

  it("answers the current state unchanged without either, and a fold of every log equals it", async () => {
    const plain = await get(`/v1/state/${pid}/stable`);
    expect(plain.json()).not.toHaveProperty("as_of");
    const all = await get(`/v1/state/${pid}/stable?as_of=2299-01-01`);
    expect(all.json().modules).toEqual(plain.json().modules);
    expect(names(await symptoms(""))).toEqual({ pain: 3, nausea: 5 });
    expect((await symptoms(`known_at=${new Date().toISOString()}`)).payload).toEqual((await symptoms("")).payload);
    expect(all.headers["x-pss-as-of"]).toBe("2299-01-01T00:00:00.000Z");
    expect(Number(all.headers["x-pss-applied-seq"])).toBeGreaterThan(0);
  });

  it("lists event modules and renders views from the folded state, raw and markdown", async () => {
    const list = (await get(`/v1/state/${pid}/event-modules?as_of=${BETWEEN_EVENTS}`)).json();
    expect(list.modules.map((m: { module_type: string }) => m.module_type)).toEqual(["symptoms"]);
    const raw = (await get(`/v1/state/${pid}/views/symptom_snapshot?format=raw&known_at=${between}`)).json();
    expect(raw).toMatchObject({ known_at: between, view_type: "symptom_snapshot" });
    const refs = raw.content.blocks.flatMap((b: { refs: string[] }) => b.refs);
    expect(refs).toContain(first[0]);
    expect(refs).not.toContain(second[1]);
    const md = await get(`/v1/state/${pid}/views/symptom_snapshot?format=markdown&as_of=${BETWEEN_EVENTS}`);
    expect(md.headers["x-pss-as-of"]).toBe("2026-07-02T12:00:00.000Z");
    expect(md.body).toContain("nausea");
    const block = (await get(`/v1/state/${pid}/views/medication_snapshot/blocks/current_medications?known_at=${between}`)).json();
    expect(block.content).toContain("500 mg");
    const views = (await get(`/v1/state/${pid}/views?as_of=2026-06-01`)).json();
    expect(views.views.every((v: { view_type: string; has_blocks: boolean }) => !v.has_blocks || v.view_type === "profile_snapshot")).toBe(true);
    const recent = (await get(`/v1/state/${pid}/views/symptom_snapshot/recent?known_at=${between}`)).json();
    expect(recent.items.map((i: { log_id: string }) => i.log_id)).toEqual([first[0]]);
  });

  it("refuses a bad instant and a known_at after now with a 422 naming the parameter, and checks tenancy as the plain read", async () => {
    const bad = await get(`/v1/state/${pid}/stable?as_of=yesterday`);
    expect(bad.statusCode).toBe(422);
    expect(bad.json().details[0]).toMatchObject({ location: ["query", "as_of"], input_value: "yesterday" });
    const ahead = await get(`/v1/state/${pid}/stable?known_at=2299-01-01`);
    expect(ahead.statusCode).toBe(422);
    expect(ahead.json().message).toMatch(/known_at .* is after now/);
    expect((await get(`/v1/state/pat_00000000000000000000000000/stable?as_of=2026-07-01`)).statusCode).toBe(404);
  });
});

describe("GET /v1/state/{pid}/diff", () => {
  it("answers the modules and fields that changed between two event times", async () => {
    const r = await get(`/v1/state/${pid}/diff?from=${BETWEEN_EVENTS}&to=2026-07-06`);
    expect(r.statusCode).toBe(200);
    const d = r.json();
    expect(d).toMatchObject({ patient_id: pid, basis: "event", from: "2026-07-02T12:00:00.000Z", to: "2026-07-06T00:00:00.000Z", summarized: 0 });
    expect(d.modules.map((m: { module_type: string; op: string }) => `${m.module_type}:${m.op}`)).toEqual(["medications:updated", "symptoms:updated", "lab_results:created"]);
    const meds = d.modules[0];
    expect(meds.fields.map((f: { field: string }) => f.field)).toEqual(["medications"]);
    expect(meds.fields[0].before[0].dose).toBe("500 mg");
    expect(meds.fields[0].after[0].dose).toBe("1000 mg");
    expect(d.modules[1].updated_at).toEqual({ before: "2026-07-02T08:00:00.000Z", after: "2026-07-05T08:00:00.000Z" });
  });

  it("with basis=known, answers what the second batch changed, to defaulting to now", async () => {
    const d = (await get(`/v1/state/${pid}/diff?from=${between}&basis=known`)).json();
    expect(d.basis).toBe("known");
    expect(d.modules.map((m: { module_type: string }) => m.module_type)).toEqual(["medications", "symptoms"]);
    const after = d.modules[1].fields.find((f: { field: string }) => f.field === "symptoms").after;
    expect(after.map((s: { name: string }) => s.name).sort()).toEqual(["nausea", "pain"]);
  });

  it("refuses from after to, and a known to after now", async () => {
    const r = await get(`/v1/state/${pid}/diff?from=2026-07-06&to=2026-07-01`);
    expect(r.statusCode).toBe(422);
    expect(r.json().message).toContain("swap them");
    expect((await get(`/v1/state/${pid}/diff?from=2026-07-01&to=2299-01-01&basis=known`)).statusCode).toBe(422);
    expect((await get(`/v1/state/${pid}/diff`)).statusCode).toBe(422);
  });
});

describe("MCP tools at a past time (SDK client over a socket)", () => {
  const call = (name: string, args: Record<string, unknown>) => callTool(client, name, { patient_id: pid, ...args });

  it("get_event_state_module and get_stable_data take as_of and known_at", async () => {
    const late = await call("get_event_state_module", { module_type: "symptoms", as_of: BETWEEN_EVENTS });
    expect(late.isError).toBe(false);
    expect(late.json).toMatchObject({ as_of: "2026-07-02T12:00:00.000Z", known_at: null });
    expect(names(late.json)).toEqual({ pain: 8, nausea: 5 });
    const known = await call("get_event_state_module", { module_type: "symptoms", known_at: between });
    expect(names(known.json)).toEqual({ pain: 8 });
    const stable = await call("get_stable_data", { modules: ["medications"], known_at: between });
    expect(stable.json.modules.medications.payload.medications[0].dose).toBe("500 mg");
    const list = await call("list_event_state_modules", { as_of: BETWEEN_EVENTS });
    expect(list.json.modules.map((m: { module_type: string }) => m.module_type)).toEqual(["symptoms"]);
  });

  it("get_view renders the past state, raw and markdown", async () => {
    const raw = await call("get_view", { view_type: "symptom_snapshot", known_at: between });
    expect(raw.json.known_at).toBe(between);
    expect(raw.text).not.toContain(second[1]);
    const md = await call("get_view", { view_type: "symptom_snapshot", format: "markdown", as_of: BETWEEN_EVENTS });
    expect(md.text).toContain("as_of 2026-07-02T12:00:00.000Z");
    expect(md.text).toContain("nausea");
  });

  it("answers a known_at after now and a bad instant as tool errors that say what to change", async () => {
    const ahead = await call("get_stable_data", { known_at: "2299-01-01" });
    expect(ahead.isError).toBe(true);
    expect(ahead.text).toMatch(/known_at .* is after now/);
    const bad = await call("get_view", { view_type: "symptom_snapshot", as_of: "last week" });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain("as_of");
  });
});
