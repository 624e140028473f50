import { describe, expect, it } from "vitest";
import { evolvePatient } from "../../../readmodels/patient-state.js";
import { applyInArrivalOrder, at, given, log, payload } from "./given.js";

describe("demographics", () => {
  it("merges fields one by one, the latest event time winning even when an older log arrives last", () => {
    const logs = [
      log("demographics", at(3), { name: "Ada King", language: "en" }),
      log("demographics", at(1), { name: "Ada Byron", sex: "female", language: "fr" }),
    ];
    const d = payload(applyInArrivalOrder(logs), "demographics");
    expect(d).toMatchObject({ name: "Ada King", sex: "female", language: "en" });
    expect(payload(given(logs), "demographics")).toEqual(d);
  });

  it("merges extensions at leaf level, an older leaf never overwriting a newer one", () => {
    const logs = [
      log("demographics", at(2), { extensions: { site: { ward: "B", bed: 4 }, vip: true } }),
      log("demographics", at(1), { extensions: { site: { ward: "A", floor: 2 }, vip: false } }),
      log("demographics", at(3), { extensions: { site: { bed: null } } }),
    ];
    expect(payload(applyInArrivalOrder(logs), "demographics").extensions).toEqual({ site: { ward: "B", floor: 2 }, vip: true });
  });

  it("clears a field sent as null and keeps who asserted each change", () => {
    const s = given([log("demographics", at(1), { phone: "555", source: "intake" }), log("demographics", at(2), { phone: null })]);
    const d = payload(s, "demographics");
    expect(d.phone).toBeUndefined();
    expect(d.sources.map((x) => x.source)).toEqual(["intake", null]);
  });
});

describe("user_preferences and social", () => {
  it("merges notification preferences per channel", () => {
    const s = given([
      log("preferences", at(1), { notification_preferences: { push: true, email: true }, tone: "warm" }),
      log("preferences", at(2), { notification_preferences: { email: false } }),
    ]);
    expect(payload(s, "user_preferences")).toMatchObject({ tone: "warm", notification_preferences: { push: true, email: false } });
  });

  it("keeps the latest social determinant of each field", () => {
    const s = given([
      log("social_determinants", at(2), { living_situation: "with partner" }),
      log("social_determinants", at(1), { living_situation: "alone", transportation_access: "car" }),
    ]);
    expect(payload(s, "social")).toMatchObject({ living_situation: "with partner", transportation_access: "car" });
  });
});

describe("patch-style logs that change nothing", () => {
  it("leave the state as it was when they name no field and no extension leaf", () => {
    const empty = given([]);
    for (const [type, p] of [
      ["demographics", {}], ["demographics", { extensions: {}, source: "intake" }], ["preferences", { notification_preferences: {}, extensions: { a: {} } }],
      ["social_determinants", {}], ["insurance", {}], ["insurance", { payer: null, action: "add" }], ["pharmacy", { extensions: {} }],
    ] as const) {
      const r = evolvePatient(empty, log(type, at(1), p));
      expect(r.changes).toEqual([]);
      expect(r.state.stable).toBe(empty.stable);
    }
    const s = given([log("demographics", at(1), { name: "Ada" })]);
    const r = evolvePatient(s, log("demographics", at(2), { extensions: {} }));
    expect(r.changes).toEqual([]);
    expect(r.state.stable).toBe(s.stable);
  });

  it("leave an emergency contact, insurance plan or pharmacy re-sent with the values it holds as it was, its sources and updated_at included", () => {
    const first = [
      log("emergency_contact", at(1), { name: "Jane", phone: "1", extensions: { k: 1 } }),
      log("insurance", at(1), { payer: "Acme", rank: "primary" }),
      log("pharmacy", at(1), { type: "retail", name: "Corner" }),
    ];
    const s = given(first);
    for (const [type, p] of [
      ["emergency_contact", { name: "Jane", phone: "1", extensions: { k: 1 }, action: "update" }],
      ["insurance", { payer: "Acme" }],
      ["pharmacy", { type: "retail", name: "Corner", source: "ehr" }],
    ] as const) {
      const r = evolvePatient(s, log(type, at(2), p));
      expect(r.changes).toEqual([]);
      expect(r.state.stable).not.toBe(s.stable);
      expect(JSON.stringify(Object.values(r.state.stable).map((e) => [e.payload, e.updated_at]))).toBe(JSON.stringify(Object.values(s.stable).map((e) => [e.payload, e.updated_at])));
    }
  });

  it("still move the field's clock when a later log restates a value, so an older log applied later does not overwrite it", () => {
    const logs = [
      log("emergency_contact", at(1), { name: "Jane", phone: "1" }),
      log("emergency_contact", at(3), { name: "Jane", phone: "1" }),
      log("emergency_contact", at(2), { name: "Jane", phone: "2" }),
    ];
    for (const s of [given(logs), applyInArrivalOrder(logs)]) expect(payload(s, "emergency_contact").contacts[0]?.phone).toBe("1");
  });
});

describe("multi-entry profile modules", () => {
  it("adds, updates and removes emergency contacts by normalized name", () => {
    const s = given([
      log("emergency_contact", at(1), { name: "Jane Doe", phone: "1" }),
      log("emergency_contact", at(2), { name: "jane  doe ", action: "update", relationship: "sister" }),
      log("emergency_contact", at(3), { name: "Bob", phone: "2" }),
      log("emergency_contact", at(4), { name: "BOB", action: "remove" }),
    ]);
    expect(payload(s, "emergency_contact").contacts).toEqual([
      expect.objectContaining({ name: "jane  doe ", phone: "1", relationship: "sister", email: null, updated_at: at(2) }),
    ]);
  });

  it("keeps one insurance plan per rank, a plan without rank being the primary", () => {
    const s = given([
      log("insurance", at(1), { payer: "Acme", member_id: "M1" }),
      log("insurance", at(2), { payer: "Beta", rank: "secondary" }),
      log("insurance", at(3), { rank: "primary", plan_name: "Gold" }),
    ]);
    expect(payload(s, "insurance").plans.map((p) => [p.rank, p.payer, p.plan_name])).toEqual([["primary", "Acme", "Gold"], ["secondary", "Beta", null]]);
  });

  it("keeps one pharmacy per type and removes it on action remove", () => {
    const s = given([
      log("pharmacy", at(1), { name: "Corner", type: "retail" }),
      log("pharmacy", at(2), { name: "MailRx", type: "mail_order" }),
      log("pharmacy", at(3), { type: "retail", action: "remove" }),
    ]);
    expect(payload(s, "pharmacy").pharmacies.map((p) => p.name)).toEqual(["MailRx"]);
  });

  it("identifies care team members by role and name", () => {
    const s = given([
      log("care_team", at(1), { members: [{ action: "add", role: "oncologist", name: "Dr. A" }, { action: "add", role: "nurse", name: "Sam" }] }),
      log("care_team", at(2), { members: [{ action: "update", role: "Oncologist", name: "dr. a", npi: "123" }, { action: "remove", role: "nurse", name: "Sam" }] }),
    ]);
    expect(payload(s, "care_team").members).toEqual([expect.objectContaining({ role: "Oncologist", name: "dr. a", npi: "123" })]);
    expect(payload(s, "care_team").members[0]?.sources).toHaveLength(2);
  });
});

describe("condition_diagnosis", () => {
  it("tracks each condition with status and history, and the treatment phase with its history", () => {
    const s = given([
      log("condition", at(1), { disease_type: "Breast cancer", stage: "II", icd10_codes: ["C50.9"], is_primary: true }),
      log("condition", at(2), { conditions: [{ disease_type: "hypertension", clinical_status: "active" }] }),
      log("condition", at(5), { icd10_codes: ["C50.9"], clinical_status: "remission" }),
      log("treatment_phase", at(4), { new_phase: "active_treatment", effective_date: "2025-03-04", changed_by: "clinician" }),
      log("treatment_phase", at(6), { previous_phase: "active_treatment", new_phase: "surveillance", effective_date: "2025-03-06", changed_by: "clinician" }),
    ]);
    const d = payload(s, "condition_diagnosis");
    expect(d.conditions).toHaveLength(2);
    expect(d.conditions[0]).toMatchObject({ disease_type: "Breast cancer", status: "remission", stage: "II", is_primary: true, first_reported_at: at(1), last_reported_at: at(5) });
    expect(d.conditions[0]?.history.map((h) => h.status)).toEqual(["active", "remission"]);
    expect(d.treatment_phase).toMatchObject({ current: "surveillance", effective_date: "2025-03-06", updated_at: at(6) });
    expect(d.treatment_phase.history.map((h) => h.new_phase)).toEqual(["active_treatment", "surveillance"]);
  });

  it("records the first report's effective status in history, one entry per condition of a multi-condition payload", () => {
    const s = given([
      log("condition", at(1), { conditions: [{ disease_type: "asthma" }, { disease_type: "gout", clinical_status: "remission" }] }),
      log("condition", at(2), { disease_type: "asthma", stage: "mild" }),
    ]);
    const [asthma, gout] = payload(s, "condition_diagnosis").conditions;
    expect(asthma?.history.map((h) => [h.status, h.stage])).toEqual([["active", null], [null, "mild"]]);
    expect(gout?.history.map((h) => h.status)).toEqual(["remission"]);
  });

  it("keeps a single primary condition", () => {
    const s = given([
      log("condition", at(1), { disease_type: "A", is_primary: true }),
      log("condition", at(2), { disease_type: "B", is_primary: true }),
    ]);
    expect(payload(s, "condition_diagnosis").conditions.map((c) => [c.disease_type, c.is_primary])).toEqual([["A", false], ["B", true]]);
  });
});

describe("allergies", () => {
  it("identifies allergies by snomed_code else allergen, with status history, and removes them on action remove", () => {
    const s = given([
      log("allergy_intolerance", at(1), { allergies: [{ allergen: "Penicillin", criticality: "high" }, { allergen: "peanut", snomed_code: "91935009" }] }),
      log("allergy_intolerance", at(2), { allergies: [{ allergen: "penicillin", clinical_status: "resolved", action: "update" }] }),
      log("allergy_intolerance", at(3), { allergies: [{ allergen: "Peanuts", snomed_code: "91935009", action: "remove" }] }),
    ]);
    const list = payload(s, "allergies").allergies;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ allergen: "penicillin", status: "resolved", criticality: "high", first_reported_at: at(1), last_reported_at: at(2) });
    expect(list[0]?.history.map((h) => h.status)).toEqual(["active", "resolved"]);
  });

  it("records the first report's effective status in history, and later reports' status only as restated", () => {
    const s = given([
      log("allergy_intolerance", at(1), { allergies: [{ allergen: "latex" }] }),
      log("allergy_intolerance", at(2), { allergies: [{ allergen: "latex", criticality: "low", action: "update" }] }),
      log("allergy_intolerance", at(3), { allergies: [{ allergen: "sulfa", clinical_status: "inactive" }] }),
    ]);
    const [latex, sulfa] = payload(s, "allergies").allergies;
    expect(latex?.history.map((h) => [h.status, h.criticality])).toEqual([["active", null], [null, "low"]]);
    expect(sulfa?.history.map((h) => h.status)).toEqual(["inactive"]);
  });

  it("records as first the earliest report by event time, whatever the arrival order", () => {
    const logs = [
      log("allergy_intolerance", at(2), { allergies: [{ allergen: "latex", clinical_status: "resolved" }] }),
      log("allergy_intolerance", at(1), { allergies: [{ allergen: "latex" }] }),
    ];
    expect(payload(given(logs), "allergies").allergies[0]?.history.map((h) => h.status)).toEqual(["active", "resolved"]);
  });
});

describe("procedures, immunizations, devices, family_history", () => {
  it("keeps procedures and procedure results by code and date", () => {
    const s = given([
      log("procedure", at(1), { procedure_name: "Colonoscopy", procedure_code: "45378", performed_at: "2025-02-20T10:00:00Z", outcome: "normal" }),
      log("procedure", at(2), { procedure_code: "45378", performed_at: "2025-02-20T11:00:00Z", status: "completed" }),
      log("procedure_result", at(3), { collection_datetime: "2025-02-20T10:30:00Z", results: [{ result_type: "pathology", test_name: "Polyp biopsy", value_string: "benign" }] }),
      // The same result, its time written with an offset: one result.
      log("procedure_result", at(4), { collection_datetime: "2025-02-20T12:30:00+02:00", results: [{ result_type: "pathology", test_name: "Polyp biopsy", value_string: "benign" }] }),
    ]);
    const d = payload(s, "procedures");
    expect(d.procedures).toEqual([expect.objectContaining({ name: "Colonoscopy", code: "45378", status: "completed", details: { outcome: "normal" } })]);
    expect(d.results).toEqual([expect.objectContaining({ test_name: "Polyp biopsy", value_string: "benign", performed_at: "2025-02-20T10:30:00.000Z" })]);
  });

  it("keeps one immunization per vaccine dose", () => {
    const s = given([
      log("immunization", at(1), { vaccine_name: "Influenza", cvx_code: "141", administered_date: "2024-10-01" }),
      log("immunization", at(2), { cvx_code: "141", administered_date: "2024-10-01", lot_number: "L1" }),
      log("immunization", at(3), { vaccine_name: "Influenza", cvx_code: "141", administered_date: "2025-10-01" }),
    ]);
    const list = payload(s, "immunizations").immunizations;
    expect(list.map((i) => [i.key, i.vaccine, i.details.lot_number ?? null])).toEqual([["141@2024-10-01", "Influenza", "L1"], ["141@2025-10-01", "Influenza", null]]);
  });

  it("updates a device by its id and removes it on action remove", () => {
    const s = given([
      log("device", at(1), { device_id: "SN1", device_type: "cgm", name: "Libre" }),
      log("device", at(2), { device_id: "SN1", status: "inactive" }),
      log("device", at(3), { device_type: "smartwatch", name: "Forerunner" }),
      log("device", at(4), { device_type: "smartwatch", name: "forerunner", status: "entered_in_error" }),
    ]);
    expect(payload(s, "devices").devices).toEqual([expect.objectContaining({ device_id: "SN1", name: "Libre", status: "inactive" })]);
  });

  it("keeps one family history entry per relative, the latest log replacing its conditions", () => {
    const s = given([
      log("family_history", at(1), { relationship: "mother", conditions: [{ condition: "breast cancer", onset_age_years: 52 }, { condition: "diabetes" }] }),
      log("family_history", at(2), { relationship: "Mother", deceased: true, conditions: [{ condition: "breast cancer", onset_age_years: 52, contributed_to_death: true }] }),
      log("family_history", at(2), { relationship: "sister", name: "Ann", conditions: [{ condition: "asthma" }] }),
      log("family_history", at(3), { relationship: "sister", name: "Bea", status: "completed" }),
      log("family_history", at(4), { relationship: "sister", name: "bea", status: "entered_in_error" }),
    ]);
    const list = payload(s, "family_history").relatives;
    expect(list.map((r) => [r.key, r.deceased, r.conditions?.map((c) => c.condition)])).toEqual([
      ["mother|", true, ["breast cancer"]],
      ["sister|ann", null, ["asthma"]],
    ]);
    expect(list[0]?.conditions?.[0]).toEqual({ condition: "breast cancer", snomed_code: null, icd10_code: null, onset_age_years: 52, contributed_to_death: true });
  });
});
