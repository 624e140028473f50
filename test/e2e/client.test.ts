import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConflictError, f, NotFoundError, PatientStateClient, QueryResult, ValidationError, type LogInput } from "../../client/index.js";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
let pss: PatientStateClient;
let pid: string;
let other: string;
let logIds: string[];

const logsFor = (p: string): LogInput[] => [
  { log_type: "symptom_report", patient_id: p, timestamp: "2026-07-01T08:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 8 }] }, trace: "visit-1" },
  { log_type: "symptom_report", patient_id: p, timestamp: "2026-07-03T08:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 4 }] }, trace: "Visit-2" },
  { log_type: "medication_list_update", patient_id: p, timestamp: "2026-07-01T09:00:00Z", payload: { medications: [{ action: "add", medication_name: "Metformin", rxnorm_cui: "860975", dose: "500 mg", frequency: "BID" }] } },
  { log_type: "lab_results", patient_id: p, timestamp: "2026-07-02T07:00:00Z", payload: { results: [{ loinc_code: "2345-7", test_name: "Glucose", value_numeric: 210, unit: "mg/dL", abnormal_flag: "H" }] } },
  { log_type: "user_login", patient_id: p, timestamp: "2026-07-02T10:00:00Z", payload: {} },
];

beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "10" });
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = t.app.server.address() as { port: number };
  pss = new PatientStateClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: t.adminKey });
  pid = (await pss.patients.create({ first_name: "Ada" })).id;
  other = (await pss.patients.create({ first_name: "Grace" })).id;
  logIds = (await pss.logs.batch([...logsFor(pid), ...logsFor(other).slice(0, 2)])).results.map((r) => r.id!);
});
afterAll(async () => {
  await t?.close();
});

describe("client: patients", () => {
  it("creates, reads, updates, lists and finds patients by external identifier", async () => {
    const p = await pss.patients.create({ first_name: "Mary", timezone: "Europe/London", external_identifiers: [{ system: "mrn", value: "M-1" }] });
    expect(p).toMatchObject({ id: expect.stringMatching(/^pat_/), first_name: "Mary", timezone: "Europe/London", status: "active" });
    expect(await pss.patients.get(p.id)).toEqual(p);
    expect(await pss.patients.update(p.id, { last_name: "Shelley", email: null })).toMatchObject({ first_name: "Mary", last_name: "Shelley" });
    const page = await pss.patients.list({ limit: 2 });
    expect(page).toMatchObject({ total: 3, has_more: true });
    expect(page.patients).toHaveLength(2);
    expect((await pss.patients.findByExternalId("mrn", "M-1"))?.id).toBe(p.id);
    expect((await pss.patients.findByExternalId(undefined, "M-1"))?.id).toBe(p.id);
    expect(await pss.patients.findByExternalId("mrn", "nobody")).toBeNull();
  });

  it("edits identifiers, creates in batches and deletes", async () => {
    const p = await pss.patients.create({ external_identifiers: [{ system: "mrn", value: "E-1" }] });
    const added = await pss.patients.addIdentifiers(p.id, [{ system: "mrn", value: "E-2" }, { system: "mrn", value: "E-1" }]);
    expect(added).toMatchObject({ added: 1, skipped: 1, added_identifiers: [{ system: "mrn", value: "E-2" }], skipped_identifiers: [{ system: "mrn", value: "E-1" }] });
    const removed = await pss.patients.removeIdentifiers(p.id, [{ system: "mrn", value: "E-1" }]);
    expect(removed).toMatchObject({ removed: 1, external_identifiers: [{ system: "mrn", value: "E-2" }] });
    // PUT adds identifiers too, linked to an integration here; a system alone removes all of it.
    const linked = await pss.patients.update(p.id, { disease_stage: "II", external_identifiers: [{ system: "epic", value: "E-3", integration_id: "itg-1" }] });
    expect(linked).toMatchObject({ disease_stage: "II", external_identifiers: [{ system: "mrn", value: "E-2" }, { system: "epic", value: "E-3", integration_id: "itg-1" }] });
    expect((await pss.patients.list({ integrationId: "itg-1" })).patients.map((x) => x.id)).toEqual([p.id]);
    expect((await pss.patients.removeIdentifiers(p.id, [{ system: "mrn" }])).external_identifiers).toEqual([{ system: "epic", value: "E-3", integration_id: "itg-1" }]);
    const batch = await pss.patients.batchCreate([{ first_name: "A" }, { timezone: "Mars/Olympus" }]);
    expect(batch).toMatchObject({ count: 1, items: [{ index: 0 }], errors: [{ index: 1, code: "validation_error" }] });
    expect(await pss.patients.delete(p.id)).toEqual({ id: p.id, status: "deleted", permanent: false });
    await expect(pss.patients.get(p.id)).rejects.toBeInstanceOf(NotFoundError);
    await pss.patients.delete(batch.items[0]!.id, { permanent: true });
  });

  it("maps 409 and 422 to typed errors carrying the spec's body", async () => {
    await pss.patients.create({ external_identifiers: [{ system: "mrn", value: "C-1" }] });
    const conflict = await pss.patients.create({ external_identifiers: [{ system: "mrn", value: "C-1" }] }).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(ConflictError);
    expect(conflict).toMatchObject({ status_code: 409, error_type: "conflict_error" });
    const invalid = await pss.patients.create({ timezone: "Mars/Olympus" }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(ValidationError);
    expect(invalid).toMatchObject({ status_code: 422, error_type: "validation_error", details: [{ field: "timezone", location: ["body", "timezone"], input_value: "Mars/Olympus" }] });
  });
});

describe("client: logs", () => {
  it("sends a batch where each log stands alone, and an atomic one that is all or nothing", async () => {
    const bad = { log_type: "symptom_report", patient_id: pid, timestamp: "2026-07-04T08:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 99 }] } };
    const good = { log_type: "user_login", patient_id: pid, timestamp: "2026-07-04T09:00:00Z", payload: {}, idempotency_key: "client-once" };
    const r = await pss.logs.batch([bad, good]);
    expect(r).toMatchObject({ accepted: 1, failed: 1, errors: [{ index: 0, code: "validation_error" }] });
    expect((await pss.logs.batch([good])).duplicates).toBe(1);
    const atomic = await pss.logs.batch([bad, good], { atomic: true }).catch((e: unknown) => e);
    expect(atomic).toBeInstanceOf(ValidationError);
    expect((atomic as ValidationError).details[0]).toMatchObject({ location: ["body", "logs", 0, "payload", "symptoms", 0, "score"] });
  });

  it("buffers logs in a logger that flushes by size and on close, reporting rejected logs", async () => {
    const p = (await pss.patients.create()).id;
    const rejected: string[] = [];
    const logger = pss.logs.logger({ maxBatch: 3, flushIntervalMs: 50, onError: (e) => rejected.push(...e.logs.map((l) => l.log_type)) });
    for (let i = 0; i < 7; i++) await logger.log({ log_type: "user_login", patient_id: p, timestamp: `2026-07-0${i + 1}T10:00:00Z`, payload: {} });
    await logger.log({ log_type: "no_such_type", patient_id: p, timestamp: "2026-07-09T10:00:00Z", payload: {} });
    await logger.close();
    expect(logger.stats).toMatchObject({ queued: 0, sent: 8, accepted: 7, failed: 1 });
    expect(rejected).toEqual(["no_such_type"]);
    expect(await pss.logs(p).count()).toBe(7);
    await expect(logger.log({ log_type: "user_login", patient_id: p, timestamp: "2026-07-09T10:00:00Z", payload: {} })).rejects.toThrow(/closed/);
  });

  it("reads the catalog", async () => {
    const types = await pss.admin.logTypes();
    expect(types.map((x) => x.log_type)).toContain("symptom_report");
    expect((await pss.admin.logType("condition_updated"))?.log_type).toBe("condition");
    expect(await pss.admin.logType("horoscope")).toBeNull();
  });
});

describe("client: state", () => {
  it("reads stable and event modules", async () => {
    const stable = await pss.state.stable(pid, { modules: ["medications"] });
    expect(Object.keys(stable.modules)).toEqual(["medications"]);
    expect((stable.modules.medications!.payload.medications as { rxnorm_cui: string }[])[0]!.rxnorm_cui).toBe("860975");
    expect((await pss.state.eventModules(pid)).modules.map((m) => m.module_type)).toEqual(expect.arrayContaining(["symptoms", "lab_results"]));
    expect((await pss.state.eventModule(pid, "lab_results")).payload).toHaveProperty("results");
    await expect(pss.state.eventModule(pid, "moonphase")).rejects.toBeInstanceOf(NotFoundError);
  });

  it("reads views raw and as markdown, their blocks and recent entries", async () => {
    expect((await pss.state.views(pid)).views.map((v) => v.view_type)).toContain("symptom_snapshot");
    const raw = await pss.state.view(pid, "symptom_snapshot");
    expect(raw.content.blocks.flatMap((b) => b.refs)).toEqual(expect.arrayContaining([logIds[0], logIds[1]]));
    const md = await pss.state.view(pid, "symptom_snapshot", { format: "markdown" });
    expect(typeof md).toBe("string");
    expect(md).toContain("pain");
    const blocks = await pss.state.blocks(pid, "symptom_snapshot");
    const block = await pss.state.block(pid, "symptom_snapshot", blocks.blocks[0]!.block_id);
    expect(block).toMatchObject({ block_id: blocks.blocks[0]!.block_id, content: expect.any(String) });
    const recent = await pss.state.recent(pid, "symptom_snapshot", { limit: 1 });
    expect(recent).toMatchObject({ count: 1, total_count: 2, entries: ["2026-07-03 08:00 — symptom_report: pain 4/10 (esas_r)"] });
    expect(recent.items).toEqual([{ timestamp: "2026-07-03T08:00:00.000Z", module_type: "symptoms", kind: "symptom_report", summary: "pain 4/10 (esas_r)", log_id: logIds[1] }]);
    expect(raw.content.blocks[0]!.result).toEqual({ id: raw.content.blocks[0]!.id, name: raw.content.blocks[0]!.name, content: raw.content.blocks[0]!.text });
    expect(raw.content.blocks[0]!.template_ref).toEqual({ block_id: raw.content.blocks[0]!.id });
  });

  it("reads the state at a past time, and what changed between two times", async () => {
    const early = await pss.state.eventModule(pid, "symptoms", { asOf: "2026-07-02" });
    expect(early).toMatchObject({ as_of: "2026-07-02T00:00:00.000Z", known_at: null });
    expect((early.payload.symptoms as { current_score: number }[])[0]!.current_score).toBe(8);
    expect((await pss.state.stable(pid, { asOf: "2026-06-30" })).modules).toEqual({});
    const md = await pss.state.view(pid, "symptom_snapshot", { format: "markdown", asOf: "2026-07-02" });
    expect(md).not.toContain("4/10");
    const d = await pss.state.diff(pid, { from: "2026-07-02", to: "2026-07-04" });
    expect(d.modules.map((m) => m.module_type)).toEqual(["symptoms", "engagement", "lab_results"]);
    const c = await pss.state.changes(pid, { since: "2026-07-02", until: "2026-07-04" });
    expect(c).toMatchObject({ since: "2026-07-02T00:00:00.000Z", until: "2026-07-04T00:00:00.000Z" });
    expect(c.symptoms.map((x) => x.kind)).toEqual(["improved"]);
  });

  it("reads memories newest first, filtered by text", async () => {
    const own = (await pss.patients.create({ first_name: "Mem" })).id;
    const sent = await pss.logs.batch([
      { log_type: "memory_report", patient_id: own, timestamp: "2026-07-01T08:00:00Z", payload: { content: "Likes long walks" } },
      { log_type: "memory_report", patient_id: own, timestamp: "2026-07-02T08:00:00Z", payload: { content: "Afraid of needles", type: "mood_stress" } },
    ]);
    const all = await pss.state.memories(own);
    expect(all.results.map((m) => [m.memory_id, m.content])).toEqual([[sent.results[1]!.id, "Afraid of needles"], [sent.results[0]!.id, "Likes long walks"]]);
    expect(all.results[0]!.metadata).toMatchObject({ origin: "memory_report", type: "mood_stress", type_source: "client" });
    expect((await pss.state.memories(own, { query: "WALK" })).results.map((m) => m.content)).toEqual(["Likes long walks"]);
    expect(await pss.state.memories(own, { limit: 1 })).toMatchObject({ count: 1 });
  });

  it("pages logs and events with cursors, awaited or iterated", async () => {
    const first = await pss.state.logs(pid, { limit: 2 });
    expect(first.logs).toHaveLength(2);
    expect(first.next_cursor).not.toBeNull();
    const pages = [];
    for await (const page of pss.state.logs(pid, { limit: 2, logTypes: ["symptom_report", "lab_results", "user_login", "medication_list_update"] })) pages.push(page.count);
    expect(pages.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(5);
    const asc = [];
    for await (const log of pss.state.logs(pid, { limit: 2, order: "asc", until: "2026-07-03T23:00:00Z" }).items()) asc.push(log.timestamp);
    expect(asc).toEqual([...asc].sort());
    const traced = (await pss.state.logs(pid, { trace: "visit-1" })).logs;
    expect(traced.map((l) => [l.id, l.trace])).toEqual([[logIds[0], { object_type: null, object_id: "visit-1" }]]);
    expect((await pss.state.logs(pid, { traceId: "Visit-2", logTypes: ["symptom_report"] })).logs.map((l) => l.id)).toEqual([logIds[1]]);
    expect((await pss.state.logs(pid, { traceType: "visit" })).logs).toEqual([]);
    const events = [];
    for await (const e of pss.state.events(pid, { limit: 2 }).items()) events.push(e);
    expect(events.length).toBeGreaterThanOrEqual(5);
    expect(events[0]).toMatchObject({ trigger: "log", source_event_log_id: expect.stringMatching(/^log_/) });
    const labs = await pss.state.events(pid, { logTypes: ["lab_results_received"], status: "complete" });
    expect(labs.events.map((e) => e.source_event_log_id)).toEqual([logIds[3]]);
    expect((await pss.state.events(pid, { traceId: "visit-1" })).events.map((e) => e.source_event_log_id)).toEqual([logIds[0]]);
    expect(await pss.state.events(pid, { status: "pending" })).toMatchObject({ count: 0, events: [] });
  });
});

describe("client: log query builder", () => {
  it("filters, orders and limits; the result is an array with paging facts", async () => {
    const rows = await pss.logs(pid).eq("type", "symptom_report").gt("payload.symptoms.0.score", 3).order("timestamp", { desc: true }).limit(1).includeTotal();
    expect(rows).toBeInstanceOf(QueryResult);
    expect(Array.isArray(rows)).toBe(true);
    expect(rows.length).toBe(1);
    expect(rows[0]!.timestamp).toBe("2026-07-03T08:00:00.000Z");
    expect([...rows].map((r) => r.type)).toEqual(["symptom_report"]);
    expect(rows).toMatchObject({ totalCount: 2, hasMore: true });
    expect(rows.map((r) => r.id)).not.toBeInstanceOf(QueryResult);
    const next = await pss.logs(pid).eq("type", "symptom_report").order("timestamp", { desc: true }).limit(1).offset(1);
    expect(next[0]!.timestamp).toBe("2026-07-01T08:00:00.000Z");
  });

  it("supports every filter op and or-groups", async () => {
    const q = pss.logs(pid);
    const n = async (x: PromiseLike<unknown[]>) => (await x).length;
    expect(await q.neq("type", "symptom_report").count()).toBe(4);
    expect(await n(q.gte("timestamp", "2026-07-02T07:00:00Z").lt("timestamp", "2026-07-03T00:00:00Z"))).toBe(2);
    expect(await n(q.lte("payload.symptoms.0.score", 4))).toBe(1);
    expect(await n(q.in("type", ["lab_results", "user_login"]))).toBe(3);
    expect(await n(q.nin("type", ["symptom_report", "user_login"]))).toBe(2);
    expect(await n(q.like("trace", "visit-%"))).toBe(1);
    expect(await n(q.ilike("trace", "visit-%"))).toBe(2);
    expect(await n(q.is("trace", null).eq("type", "user_login"))).toBe(2);
    expect(await n(q.exists("payload.results"))).toBe(1);
    expect(await n(q.contains("payload.symptoms.0.name", "pai"))).toBe(2);
    expect(await n(q.or([f.eq("type", "lab_results"), f.and(f.eq("type", "symptom_report"), f.gt("payload.symptoms.0.score", 5))]))).toBe(2);
  });

  it("counts, selects, groups and answers single rows", async () => {
    expect(await pss.logs(pid).eq("type", "symptom_report").count()).toBe(2);
    const sel = await pss.logs(pid).eq("type", "symptom_report").select({ score: "payload.symptoms.0.score", at: "timestamp" }).order("timestamp");
    expect([...sel]).toEqual([{ score: 8, at: "2026-07-01T08:00:00.000Z" }, { score: 4, at: "2026-07-03T08:00:00.000Z" }]);
    const list = await pss.logs(pid).eq("type", "lab_results").select("type", { path: "payload.results.0.value_numeric", alias: "v" });
    expect([...list]).toEqual([{ type: "lab_results", v: 210 }]);
    const groups = await pss.logs(pid).eq("type", "symptom_report").groupBy("type").count("n").avg("payload.symptoms.0.score", "avg");
    expect([...groups]).toEqual([{ type: "symptom_report", n: 2, avg: 6 }]);
    const agg = await pss.logs(pid).eq("type", "symptom_report").sum("payload.symptoms.0.score", "s").min("payload.symptoms.0.score", "lo").max("payload.symptoms.0.score", "hi");
    expect(agg[0]).toEqual({ s: 12, lo: 4, hi: 8 });
    expect((await pss.logs(pid).eq("type", "lab_results").single()).type).toBe("lab_results");
    expect(await pss.logs(pid).eq("type", "vitals").maybeSingle()).toBeNull();
    await expect(pss.logs(pid).eq("type", "symptom_report").single()).rejects.toBeInstanceOf(ValidationError);
    const typed = await pss.logs(pid).eq("type", "lab_results").typed<{ results: unknown[] }>().single();
    expect(typed.timestamp).toBeInstanceOf(Date);
    expect(typed.ingested_at).toBeInstanceOf(Date);
    expect(typed.payload.results).toHaveLength(1);
  });

  it("answers whole rows with ingested_at and the trace as an object, and selects from arrays", async () => {
    const [row] = await pss.logs(pid).eq("type", "symptom_report").order("timestamp").limit(1);
    expect(row).toMatchObject({ trace: { object_type: null, object_id: "visit-1" }, ingested_at: expect.stringMatching(/Z$/) });
    const q = pss.logs(pid).eq("type", "lab_results")
      .selectArray("payload.results", { first: true, where: f.eq("abnormal_flag", "H"), element: "test_name", alias: "high" })
      .selectArray("payload.results", { where: [f.gt("value_numeric", 300)], element: "loinc_code", alias: "over" });
    expect(q.toBody().select).toEqual([
      { path: "payload.results", first: true, where: { field: "abnormal_flag", op: "eq", value: "H" }, element: "test_name", alias: "high" },
      { path: "payload.results", first: false, where: [{ field: "value_numeric", op: "gt", value: 300 }], element: "loinc_code", alias: "over" },
    ]);
    expect([...(await q)]).toEqual([{ high: "Glucose", over: [] }]);
  });

  it("queries the project and a cohort, and rejects fields outside the allowed roots", async () => {
    expect(await pss.query().eq("type", "symptom_report").count()).toBeGreaterThanOrEqual(4);
    expect(await pss.logs().eq("trace", "visit-1").count()).toBe(2);
    expect(await pss.cohort([other]).count()).toBe(2);
    expect(pss.cohort([other]).eq("type", "x").toBody()).toEqual({ patient_ids: [other], filter: [{ field: "type", op: "eq", value: "x" }] });
    const err = await pss.logs(pid).eq("patient_id", "x").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).message).toContain("patient_id");
  });
});
