import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { baseUrl, callTool, connectMcp } from "../support/mcp-client.js";
import { startStack, type TestStack } from "../support/stack.js";

/**
 * "What changed since the last visit?" in one call (issue 28, get_changes and its REST
 * twin): a patient with weeks of history before a visit on 2026-10-01 and changes after it.
 */
let t: TestStack;
let client: Client;
let pid: string;
const ids = new Map<string, string>();

const VISIT = "2026-10-01T10:00:00Z";
const day = (d: number, hh = 8) => new Date(Date.UTC(2026, 8, 1 + d, hh)).toISOString(); // d days after 2026-09-01

beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "10" });
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
  const L = (name: string, log_type: string, timestamp: string, payload: Record<string, unknown>) => ({ name, log: { log_type, patient_id: pid, timestamp, payload } });
  const sym = (d: number, s: Record<string, number>) => L(`sym${d}`, "symptom_report", day(d), { instrument: "esas_r", symptoms: Object.entries(s).map(([name, score]) => ({ name, score })) });
  const lab = (name: string, d: number, value: number, flag?: string, loinc = "4548-4", test = "Hemoglobin A1c") =>
    L(name, "lab_results", day(d, 7), { results: [{ loinc_code: loinc, test_name: test, value_numeric: value, unit: loinc === "4548-4" ? "%" : "mmol/L", ...(flag ? { abnormal_flag: flag } : {}) }] });
  const logs = [
    // Four weeks before the visit: pain 3-4, nausea 5, tiredness 2.
    ...Array.from({ length: 28 }, (_, d) => sym(d, { pain: 3 + (d % 2), nausea: 5, tiredness: 2 })),
    lab("a1c_before", 10, 6.8, "H"),
    L("list", "medication_list_update", day(0, 6), { medications: [
      { action: "add", medication_name: "Metformin", rxnorm_cui: "860975", dose: "500 mg", frequency: "BID", schedule_times: ["08:00", "20:00"] },
      { action: "add", medication_name: "Ondansetron", rxnorm_cui: "26225", dose: "4 mg", frequency: "PRN" },
    ] }),
    L("phq_before", "questionnaire_response", day(20), { instrument: { instrument_id: "PHQ-9", instrument_type: "validated" }, administration: { administration_mode: "patient_self_report" }, item_responses: [{ item_number: 9, question: "Thoughts that you would be better off dead", response_value: 0 }], scores: { total_score: 8, total_score_max: 27, severity_category: "mild" } }),
    // After the visit.
    sym(32, { pain: 8, nausea: 0, tiredness: 2, anxiety: 6 }),
    lab("a1c_after", 33, 7.4, "H"),
    lab("k_after", 33, 6.9, "HH", "2823-3", "Potassium"),
    L("dose_change", "medication_list_update", day(31, 6), { medications: [{ action: "update", medication_name: "Metformin", rxnorm_cui: "860975", dose: "1000 mg" }] }),
    L("stop", "medication_list_update", day(31, 6.5), { medications: [{ action: "remove", medication_name: "Ondansetron", rxnorm_cui: "26225" }] }),
    L("add", "medication_list_update", day(31, 7), { medications: [{ action: "add", medication_name: "Lisinopril", rxnorm_cui: "29046", dose: "10 mg", frequency: "daily" }] }),
    L("skipped", "medication_adherence", day(32, 9), { medication_adherence: [{ status: "skipped", rxnorm_cui: "860975", scheduled_time: day(32, 8) }] }),
    L("fever", "vitals_measurement", day(34, 12), { measurements: { temperature_celsius: 38.4, heart_rate_bpm: 104 }, context: {}, source: "clinic", collection_datetime: null }),
    L("vitals_ok", "vitals_measurement", day(35, 12), { measurements: { temperature_celsius: 36.8, heart_rate_bpm: 72 }, context: {}, source: "clinic", collection_datetime: null }),
    L("low_glucose", "cgm_reading", day(34, 3), { glucose_mg_dl: 52, sensor_timestamp: day(34, 3) }),
    L("phq_after", "questionnaire_response", day(34), { instrument: { instrument_id: "PHQ-9", instrument_type: "validated" }, administration: { administration_mode: "patient_self_report" }, item_responses: [{ item_number: 9, question: "Thoughts that you would be better off dead", response_value: 1 }], scores: { total_score: 17, total_score_max: 27, severity_category: "moderately_severe", clinically_significant: true }, change: { change_classification: "worsened", minimally_important_difference: 5 } }),
    L("visit2", "care_encounter", day(35, 9), { encounter_id: "enc-9", status: "finished", encounter_class: "ambulatory", encounter_type: "follow_up", reason: "Nausea review", period: { start: day(35, 9) } }),
    L("note2", "clinical_note", day(35, 10), { note_type: "progress_note", source: "ehr", encounter_id: "enc-9", sections: [{ section_label: "Plan", content: "Repeat potassium in 3 days." }] }),
    L("plan2", "clinical_plan_item", day(35, 10.5), { plan_item_id: "pi-9", item_type: "lab", description: "Repeat potassium", status: "scheduled", scheduled_date: day(38).slice(0, 10), encounter_id: "enc-9" }),
  ];
  const r = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: logs.map((x) => x.log) } })).json();
  expect(r.accepted, JSON.stringify(r.errors?.slice(0, 3))).toBe(logs.length);
  logs.forEach((x, i) => ids.set(x.name, r.results[i].id));
  client = await connectMcp(baseUrl(t.app), t.adminKey);
});

afterAll(async () => {
  await client?.close();
  await t?.close();
});

const kinds = (items: { kind: string; what: string }[]) => items.map((i) => `${i.kind}: ${i.what.split(":")[0]}`).sort();

describe("get_changes: what changed since the last visit", () => {
  let r: any;
  beforeAll(async () => {
    const got = await callTool(client, "get_changes", { patient_id: pid, since: VISIT, until: day(40) });
    expect(got.isError, got.text).toBe(false);
    r = got.json;
  });

  it("says the window and what it read", () => {
    expect(r).toMatchObject({ patient_id: pid, since: "2026-10-01T10:00:00.000Z", until: day(40) });
    expect(r.logs_in_window.total).toBe(14);
    expect(r.summary).toContain("symptoms 3");
  });

  it("symptoms: worsened, resolved and new against where each stood at the visit; unchanged ones left out", () => {
    expect(kinds(r.symptoms)).toEqual(["new: anxiety", "resolved: nausea", "worsened: pain"]);
    const pain = r.symptoms.find((x: any) => x.kind === "worsened");
    expect(pain.before).toMatchObject({ score: 4, log_id: ids.get("sym27") });
    expect(pain.after).toMatchObject({ score: 8, log_id: ids.get("sym32") });
    expect(pain.what).toContain("severe");
    expect(pain.log_ids).toEqual([ids.get("sym32"), ids.get("sym27")]);
  });

  it("labs: abnormal with the previous value, a critical first result", () => {
    const a1c = r.labs.find((x: any) => x.what.startsWith("Hemoglobin A1c"));
    expect(a1c).toMatchObject({ kind: "abnormal", log_ids: [ids.get("a1c_after"), ids.get("a1c_before")], before: { value_numeric: 6.8 }, after: { value_numeric: 7.4 } });
    expect(a1c.what).toContain("previous 6.8 % on 2026-09-11");
    const k = r.labs.find((x: any) => x.what.startsWith("Potassium"));
    expect(k).toMatchObject({ kind: "critical", log_ids: [ids.get("k_after")] });
    expect(k.what).toContain("first result of this test");
  });

  it("medications: added, removed, dose changed, a skipped dose", () => {
    const m = r.medications;
    expect(m.find((x: any) => x.kind === "added")).toMatchObject({ what: expect.stringContaining("Lisinopril"), log_ids: [ids.get("add")] });
    expect(m.find((x: any) => x.kind === "removed")).toMatchObject({ what: "Ondansetron: taken off the list", log_ids: [ids.get("stop")] });
    expect(m.find((x: any) => x.kind === "changed")).toMatchObject({ what: "Metformin: dose 500 mg → 1000 mg", before: { dose: "500 mg" }, after: { dose: "1000 mg" }, log_ids: [ids.get("dose_change"), ids.get("list")] });
    expect(m.find((x: any) => x.kind === "skipped_dose")).toMatchObject({ log_ids: [ids.get("skipped")] });
  });

  it("vitals and device readings out of range, questionnaires, encounters", () => {
    expect(r.vitals).toEqual([expect.objectContaining({ kind: "out_of_range", log_ids: [ids.get("fever")], what: "Temperature 38.4 °C, Heart rate 104 bpm" })]);
    expect(r.devices).toEqual([expect.objectContaining({ kind: "out_of_range", log_ids: [ids.get("low_glucose")], what: "CGM glucose 52 mg/dL" })]);
    expect(r.questionnaires).toEqual([expect.objectContaining({ kind: "worsened", log_ids: [ids.get("phq_after"), ids.get("phq_before")] })]);
    expect(r.questionnaires[0].what).toContain("PHQ-9: 8/27 (mild) on 2026-09-21 → 17/27 (moderately_severe)");
    expect(kinds(r.encounters)).toEqual(["encounter: Encounter 2026-10-06", "note: Note (progress_note)", "plan_item: Plan"]);
    expect(r.encounters.find((x: any) => x.kind === "note").what).toContain("Repeat potassium in 3 days.");
  });

  it("answers the same through REST, and refuses a window that ends before it starts", async () => {
    const rest = await t.app.inject({ method: "GET", url: `/v1/state/${pid}/changes?since=${VISIT}&until=${day(40)}`, headers: t.auth });
    expect(rest.statusCode).toBe(200);
    expect(rest.json()).toEqual(r);
    const bad = await t.app.inject({ method: "GET", url: `/v1/state/${pid}/changes?since=${day(40)}&until=${VISIT}`, headers: t.auth });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().message).toContain("swap them");
    const tool = await callTool(client, "get_changes", { patient_id: pid, since: "2026-13-01" });
    expect(tool.isError).toBe(true);
  });

  it("a window before the visit holds only what happened then", async () => {
    const early = (await callTool(client, "get_changes", { patient_id: pid, since: day(25), until: VISIT })).json;
    expect(early.symptoms).toEqual([]);
    expect(early.labs).toEqual([]);
    // After since (exclusive): the reports of days 26 and 27.
    expect(early.logs_in_window.total).toBe(2);
  });
});

describe("get_changes: a medication taken off the list and a dose changed twice (the outside tester's patient)", () => {
  const nov = (d: number, hh: number, mm = 0) => new Date(Date.UTC(2026, 10, d, hh, mm)).toISOString();
  const got = new Map<string, string>();
  let p1: string;
  beforeAll(async () => {
    p1 = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: { timezone: "Europe/London" } })).json().id;
    const list = (name: string, ts: string, medications: Record<string, unknown>[]) => ({ name, log: { log_type: "medication_list_update", patient_id: p1, timestamp: ts, payload: { medications } } });
    const dose = (cui: string, d: number, hh: number) => ({ name: `${cui}-${d}`, log: { log_type: "medication_adherence", patient_id: p1, timestamp: nov(d, hh, 5),
      payload: { medication_adherence: [{ status: "taken", rxnorm_cui: cui, scheduled_time: nov(d, hh) }] } } });
    const logs = [
      list("listed", nov(20, 7), [
        { action: "add", medication_name: "Metformin", rxnorm_cui: "860975", dose: "500 mg", schedule_times: ["08:00"] },
        { action: "add", medication_name: "Lisinopril", rxnorm_cui: "29046", dose: "10 mg", frequency: "QD", schedule_times: ["09:00"] },
      ]),
      list("to750", nov(22, 10), [{ action: "update", rxnorm_cui: "860975", dose: "750 mg" }]),
      list("to1000", nov(24, 7), [{ action: "update", rxnorm_cui: "860975", dose: "1000 mg" }]),
      list("removed", nov(24, 8, 30), [{ action: "delete", rxnorm_cui: "29046" }]),
      ...[20, 21, 22, 23, 24, 25, 26].map((d) => dose("860975", d, 8)),
      ...[20, 21].map((d) => dose("29046", d, 9)),
    ];
    const r = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: logs.map((x) => x.log) } })).json();
    expect(r.accepted, JSON.stringify(r.errors?.slice(0, 3))).toBe(logs.length);
    logs.forEach((x, i) => got.set(x.name, r.results[i].id));
  });

  it("keeps the removed medication's missed doses, and cites the logs on each side of a change", async () => {
    const res = await t.app.inject({ method: "GET", url: `/v1/state/${p1}/changes?since=${nov(21, 12)}&until=${nov(25, 12)}`, headers: t.auth });
    expect(res.statusCode).toBe(200);
    const m = res.json().medications;
    expect(m.find((x: any) => x.kind === "doses_not_reported" && x.what.startsWith("Lisinopril"))).toMatchObject({
      what: "Lisinopril: 2 scheduled doses not reported (2026-11-22 09:00 to 2026-11-23 09:00)", log_ids: [got.get("listed")],
    });
    expect(m.find((x: any) => x.kind === "changed")).toMatchObject({ what: "Metformin: dose 500 mg → 1000 mg", log_ids: [got.get("to1000"), got.get("listed")] });
    const mod = (await t.app.inject({ method: "GET", url: `/v1/state/${p1}/event-modules/adherence`, headers: t.auth })).json();
    const lis = mod.payload.schedule.find((s: any) => s.rxnorm_cui === "29046");
    expect(lis).toMatchObject({ removed_at: nov(24, 8, 30), expected: 4, taken: 2, unreported: 2 });
  });
});
