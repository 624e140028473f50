import { describe, expect, it } from "vitest";
import { applyInArrivalOrder, at, given, log, payload } from "./given.js";

/**
 * `extensions` merge into the entry's extensions at leaf level, latest event time winning
 * per leaf (payload-level ones under the item's own), and `source` is kept per fact.
 */
describe("extensions and sources of clinical state", () => {
  it("keeps a lab test's extensions from the payload and the result, and its sources", () => {
    const first = log("lab_results", at(1), { source: "lab", extensions: { k: 7, panel: { id: "p1" } }, results: [{ test_name: "ALT", value_numeric: 30, unit: "U/L", extensions: { k: 6 } }] });
    const second = log("lab_results", at(2), { source: { type: "ehr" }, extensions: { panel: { id: "p2" }, gone: null }, results: [{ test_name: "alt", value_numeric: 31, unit: "U/L", extensions: { only: true } }] });
    const older = log("lab_results", at(1, 6), { results: [{ test_name: "ALT", value_numeric: 29, unit: "U/L", extensions: { k: 1, only: false } }] });
    for (const s of [given([older, first, second]), applyInArrivalOrder([first, second, older])]) {
      const [alt] = payload(s, "lab_results").results;
      // The result's k (6) wins over its payload's (7); the older log's leaves lose to newer ones.
      expect(alt?.extensions).toEqual({ k: 6, panel: { id: "p2" }, only: true });
      expect(alt?.sources.map((x) => [x.source, x.log_id])).toEqual([[null, older.id], ["lab", first.id], [{ type: "ehr" }, second.id]]);
    }
  });

  it("keeps the source and extensions of each vitals measurement", () => {
    const s = given([
      log("vitals_measurement", at(1), { measurements: { heart_rate_bpm: 70 }, context: {}, source: "clinic", collection_datetime: null, extensions: { cuff: "large" } }),
      log("weight_measurement", at(2), { weight_kg: 70 }),
    ]);
    expect(payload(s, "vitals").history.map((h) => [h.source, h.extensions])).toEqual([["clinic", { cuff: "large" }], [null, {}]]);
  });

  it("merges a health metric's extensions and keeps its sources", () => {
    const s = given([
      log("health_metric", at(1), { metric_type: "energy", score: 4, scale_min: 0, scale_max: 10, source: "app", extensions: { a: 1, b: 1 } }),
      log("health_metric", at(2), { metric_type: "Energy", score: 6, scale_min: 0, scale_max: 10, extensions: { b: 2 } }),
    ]);
    const [energy] = payload(s, "symptoms").health_metrics;
    expect(energy?.extensions).toEqual({ a: 1, b: 2 });
    expect(energy?.sources.map((x) => x.source)).toEqual(["app", null]);
  });

  it("merges a symptom report's payload extensions into each symptom, under the symptom's own", () => {
    const s = given([
      log("symptom_report", at(1), { instrument: "esas_r", source: "app", extensions: { visit: "v1", k: 1 }, symptoms: [{ name: "pain", score: 3, extensions: { k: 2 } }, { name: "nausea", score: 1 }] }),
    ]);
    expect(payload(s, "symptoms").symptoms.map((x) => [x.name, x.extensions])).toEqual([["pain", { visit: "v1", k: 2 }], ["nausea", { visit: "v1", k: 1 }]]);
  });

  it("keeps the source and extensions of findings and imaging, and a note as sent", () => {
    const s = given([
      log("clinical_finding", at(1), { source: "ehr", extensions: { enc: "e1" }, findings: [{ description: "Edema", extensions: { grade: 2 } }] }),
      log("imaging_result", at(1), { source: "pacs", findings: [{ modality: "CT", extensions: { series: 3 } }] }),
      log("clinical_note", at(1), { note_type: "other", source: "ehr", sections: [{ section_label: "A", content: "B" }], extensions: { k: 1 }, template: "soap" }),
      log("treatment_response_assessment", at(1), { source: "tumor_board", extensions: { k: 1 }, assessments: [{ response_category: "PR", lesions: 2 }] }),
    ]);
    const d = payload(s, "clinical_context");
    expect(d.findings[0]).toMatchObject({ source: "ehr", extensions: { enc: "e1", grade: 2 } });
    expect(d.imaging[0]).toMatchObject({ source: "pacs", extensions: { series: 3 } });
    expect(d.notes[0]).toMatchObject({ note_type: "other", source: "ehr", extensions: { k: 1 }, template: "soap" });
    expect(d.treatment_responses[0]).toMatchObject({ source: "tumor_board", extensions: { k: 1 }, details: { lesions: 2 } });
  });

  it("merges the extensions of every report of a variant, measurement series or functional instrument, whatever the arrival order", () => {
    const logs = [
      log("genomic_variant", at(2), { source: "lab-b", variants: [{ gene: "BRCA1", variant_designation: "c.1A>G", classification: "pathogenic", extensions: { b: 2 } }] }),
      log("genomic_variant", at(1), { source: "lab-a", extensions: { a: 1, b: 1 }, variants: [{ gene: "brca1", variant_designation: "c.1A>G", classification: "VUS" }] }),
      log("clinical_measurement", at(2), { extensions: { x: 2 }, measurements: [{ measurement_type: "lvef", value_numeric: 50 }] }),
      log("clinical_measurement", at(1), { source: "echo", extensions: { x: 1, y: 1 }, measurements: [{ measurement_type: "LVEF", value_numeric: 55 }] }),
      log("functional_class", at(2), { instrument: "ecog", class: 2, extensions: { z: 2 } }),
      log("functional_class", at(1), { instrument: "ECOG", class: 1, source: "clinician", extensions: { z: 1, w: 1 } }),
    ];
    for (const s of [given(logs), applyInArrivalOrder(logs)]) {
      const d = payload(s, "clinical_context");
      expect(d.genomic_variants).toEqual([expect.objectContaining({ classification: "pathogenic", extensions: { a: 1, b: 2 } })]);
      expect(d.genomic_variants[0]?.sources.map((x) => x.source)).toEqual(["lab-a", "lab-b"]);
      expect(d.measurements[0]).toMatchObject({ latest: { value_numeric: 50 }, extensions: { x: 2, y: 1 } });
      expect(d.measurements[0]?.sources.map((x) => x.source)).toEqual(["echo", null]);
      expect(d.functional_status[0]).toMatchObject({ latest: { class: 2 }, extensions: { z: 2, w: 1 } });
      expect(d.functional_status[0]?.sources.map((x) => x.source)).toEqual(["clinician", null]);
    }
  });

  it("merges a log's payload extensions into every item it lists, under the item's own, in each multi-item profile and mood module", () => {
    const site = { site: "clinic-7", k: 1 };
    const s = given([
      log("medication_list_update", at(1), { extensions: site, medications: [{ action: "add", medication_name: "A", extensions: { own: 1, k: 2 } }] }),
      log("care_team", at(1), { extensions: site, members: [{ action: "add", role: "nurse", name: "Sam" }] }),
      log("allergy_intolerance", at(1), { extensions: site, allergies: [{ allergen: "latex", extensions: { k: 2 } }] }),
      log("condition", at(1), { extensions: site, conditions: [{ disease_type: "asthma" }, { disease_type: "gout", extensions: { k: 2 } }] }),
      log("mood_report", at(1), { extensions: site, moods: [{ mood: "anxious", intensity: 3 }] }),
      log("immunization", at(1), { extensions: site, immunizations: [{ vaccine_name: "Influenza", administered_date: "2024-10-01", extensions: { k: 2 } }] }),
      log("device", at(1), { extensions: site, devices: [{ device_id: "SN1", device_type: "cgm" }] }),
      log("family_history", at(1), { extensions: site, relatives: [{ relationship: "mother" }] }),
    ]);
    const own = { site: "clinic-7", k: 2 };
    expect(payload(s, "medications").medications[0]?.extensions).toEqual({ site: "clinic-7", k: 2, own: 1 });
    expect(payload(s, "care_team").members[0]?.extensions).toEqual(site);
    expect(payload(s, "allergies").allergies[0]?.extensions).toEqual(own);
    expect(payload(s, "condition_diagnosis").conditions.map((c) => c.extensions)).toEqual([site, own]);
    expect(payload(s, "emotional_state").moods[0]?.extensions).toEqual(site);
    expect(payload(s, "immunizations").immunizations[0]?.extensions).toEqual(own);
    expect(payload(s, "devices").devices[0]?.extensions).toEqual(site);
    expect(payload(s, "family_history").relatives[0]?.extensions).toEqual(site);
  });

  it("lets a listed item's payload extensions lose a leaf to a later log's, whatever the arrival order", () => {
    const logs = [
      log("medication_list_update", at(2), { extensions: { site: "clinic-8" }, medications: [{ action: "update", medication_name: "A" }] }),
      log("medication_list_update", at(1), { extensions: { site: "clinic-7", ward: "B" }, medications: [{ action: "add", medication_name: "A" }] }),
      log("mood_report", at(2), { extensions: { site: "clinic-8" }, moods: [{ mood: "calm", intensity: 1 }] }),
      log("mood_report", at(1), { extensions: { site: "clinic-7", ward: "B" }, moods: [{ mood: "Calm", intensity: 2 }] }),
    ];
    for (const s of [given(logs), applyInArrivalOrder(logs)]) {
      expect(payload(s, "medications").medications[0]?.extensions).toEqual({ site: "clinic-8", ward: "B" });
      expect(payload(s, "emotional_state").moods[0]?.extensions).toEqual({ site: "clinic-8", ward: "B" });
    }
  });

  it("merges a procedure result's payload extensions under the result's own", () => {
    const s = given([
      log("procedure_result", at(1), { source: "path", extensions: { case: "S-1", k: 1 }, results: [{ result_type: "pathology", test_name: "Biopsy", value_string: "benign", extensions: { k: 2 } }] }),
    ]);
    expect(payload(s, "procedures").results[0]).toMatchObject({ extensions: { case: "S-1", k: 2 }, sources: [expect.objectContaining({ source: "path" })] });
  });
});
