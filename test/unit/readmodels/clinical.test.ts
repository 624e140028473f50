import { describe, expect, it } from "vitest";
import { at, given, log, payload } from "./given.js";

const labs = (t: string, results: Record<string, unknown>[], extra: Record<string, unknown> = {}) => log("lab_results", t, { results, ...extra });

describe("lab_results", () => {
  it("keys results by LOINC code, else normalized test name, with history and the latest value", () => {
    const s = given([
      labs(at(1), [{ loinc_code: "718-7", test_name: "Hemoglobin", value_numeric: 13.2, unit: "g/dL", abnormal_flag: "N" }, { test_name: "Ferritin ", value_numeric: 8, unit: "ng/mL" }]),
      labs(at(2), [{ loinc_code: "718-7", value_numeric: 9.1, unit: "g/dL", abnormal_flag: "L" }, { test_name: "ferritin", value_numeric: 20, unit: "ng/mL" }]),
    ]);
    const r = payload(s, "lab_results").results;
    expect(r).toHaveLength(2);
    expect(r[0]).toMatchObject({ loinc_code: "718-7", test_name: "Hemoglobin", unit: "g/dL", latest: { value_numeric: 9.1, value_string: null, abnormal_flag: "L", timestamp: at(2) } });
    expect(r[0]?.history.map((h) => h.value_numeric)).toEqual([13.2, 9.1]);
    expect(r[1]).toMatchObject({ loinc_code: null, test_name: "ferritin", latest: { value_numeric: 20 } });
  });

  it("reads a result's single `value` (as the hosted product's clients send it) and a `reference_range` text, when the catalog's fields are absent", () => {
    const s = given([
      labs(at(1), [{ test_name: "Hemoglobin", value: 10.8, unit: "g/dL", reference_range: "12.0\u201316.0" }]),
      labs(at(1), [{ test_name: "Culture", value: "no growth", unit: "" }]),
      labs(at(2), [{ test_name: "Sodium", value: 140, value_numeric: 139, unit: "mmol/L", reference_range: "oops", reference_range_low: 135 }]),
    ]);
    const [hb, culture, sodium] = payload(s, "lab_results").results;
    expect(hb).toMatchObject({ reference_range_low: 12, reference_range_high: 16, latest: { value_numeric: 10.8, value_string: null, abnormal_flag: "L" } });
    expect(culture!.latest).toMatchObject({ value_numeric: null, value_string: "no growth" });
    expect(sodium).toMatchObject({ reference_range_low: 135, reference_range_high: null, latest: { value_numeric: 139 } });
  });

  it("lists the tests whose latest value is abnormal, deriving the flag from the reference range when none is sent", () => {
    const s = given([
      labs(at(1), [{ loinc_code: "2823-3", test_name: "Potassium", value_numeric: 6.9, unit: "mmol/L", abnormal_flag: "HH" }]),
      labs(at(1), [{ loinc_code: "2345-7", test_name: "Glucose", value_numeric: 60, unit: "mg/dL", reference_range_low: 70, reference_range_high: 99 }]),
      labs(at(2), [{ loinc_code: "718-7", test_name: "Hemoglobin", value_numeric: 9.1, unit: "g/dL", abnormal_flag: "L" }]),
      labs(at(3), [{ loinc_code: "718-7", test_name: "Hemoglobin", value_numeric: 13, unit: "g/dL", abnormal_flag: "N" }]),
    ]);
    expect(payload(s, "lab_results").abnormal.map((a) => [a.test_name, a.abnormal_flag, a.critical])).toEqual([["Potassium", "HH", true], ["Glucose", "L", false]]);
  });

  it("orders a test's values by collection time, so a late-arriving older value does not become the latest", () => {
    const s = given([
      labs(at(3), [{ loinc_code: "718-7", value_numeric: 12, unit: "g/dL" }], { collection_datetime: at(2) }),
      labs(at(4), [{ loinc_code: "718-7", value_numeric: 8, unit: "g/L", abnormal_flag: "L" }], { collection_datetime: at(1) }),
    ]);
    const [hb] = payload(s, "lab_results").results;
    expect(hb?.latest).toMatchObject({ value_numeric: 12, timestamp: at(2) });
    expect(hb?.unit).toBe("g/dL");
    expect(payload(s, "lab_results").abnormal).toEqual([]);
  });

  it("takes a descriptive field the latest result leaves out from the latest result that gave it, whatever its collection time", () => {
    const unnamed = labs(at(1), [{ loinc_code: "718-7", value_numeric: 11, unit: "g/dL" }]);
    const named = labs(at(2), [{
      loinc_code: "718-7", test_name: "Hemoglobin", specimen_type: "blood", test_category: "hematology", value_numeric: 13, unit: "g/dL",
      reference_range_low: 12, reference_range_high: 16, result_status: "final",
    }], { collection_datetime: "2025-02-28T12:00:00.000Z" });
    const renamed = labs(at(3), [{ loinc_code: "718-7", test_name: "Hgb (old name)", value_numeric: 12, unit: "g/dL" }], { collection_datetime: "2025-02-27T12:00:00.000Z" });
    const byName = labs(at(4), [{ test_name: "hemoglobin", value_numeric: 12.5, unit: "g/dL" }]);
    for (const order of [[unnamed, named, renamed], [renamed, named, unnamed]]) {
      const { results } = payload(given(order), "lab_results");
      expect(results).toHaveLength(1);
      // The oldest result's name loses to the newer one; the latest result (unnamed) names nothing.
      expect(results[0]).toMatchObject({
        test_name: "Hemoglobin", specimen_type: "blood", test_category: "hematology", unit: "g/dL",
        reference_range_low: 12, reference_range_high: 16, result_status: "final", latest: { value_numeric: 11, log_id: unnamed.id },
      });
    }
    // Named now, the test is found by a result that gives only its name (the latest, so its spelling shows).
    const all = payload(given([unnamed, named, renamed, byName]), "lab_results").results;
    expect(all.map((r) => [r.loinc_code, r.test_name, r.history.length])).toEqual([["718-7", "hemoglobin", 4]]);
  });

  it("keeps a reference range as one fact: bounds of two results are not mixed", () => {
    const s = given([
      labs(at(1), [{ loinc_code: "2345-7", value_numeric: 90, unit: "mg/dL", reference_range_low: 70, reference_range_high: 99 }]),
      labs(at(2), [{ loinc_code: "2345-7", value_numeric: 50, unit: "mg/dL", reference_range_low: 60 }]),
    ]);
    expect(payload(s, "lab_results").results[0]).toMatchObject({ reference_range_low: 60, reference_range_high: null, latest: { abnormal_flag: "L" } });
  });

  it("flags a result sent without a flag against the reference range the test shows, in latest, history and abnormal", () => {
    const inRange = labs(at(1), [{ loinc_code: "718-7", test_name: "Hemoglobin", value_numeric: 13, unit: "g/dL", reference_range_low: 12, reference_range_high: 16 }]);
    const low = labs(at(2), [{ loinc_code: "718-7", test_name: "Hemoglobin", value_numeric: 9, unit: "g/dL" }]);
    const reported = labs(at(3), [{ loinc_code: "718-7", value_numeric: 17, unit: "g/dL", abnormal_flag: "N" }], { collection_datetime: "2025-03-01T18:00:00.000Z" });
    for (const order of [[inRange, low, reported], [low, reported, inRange]]) {
      const d = payload(given(order), "lab_results");
      const [hb] = d.results;
      expect(hb).toMatchObject({ reference_range_low: 12, reference_range_high: 16, latest: { value_numeric: 9, abnormal_flag: "L", flag_source: "test_range" } });
      // A flag the lab sent is never replaced by a derived one.
      expect(hb?.history.map((h) => [h.value_numeric, h.abnormal_flag, h.flag_source])).toEqual([[13, "N", "own_range"], [17, "N", "reported"], [9, "L", "test_range"]]);
      expect(d.abnormal).toEqual([expect.objectContaining({ test_name: "Hemoglobin", abnormal_flag: "L", critical: false, value_numeric: 9 })]);
    }
  });

  it("re-flags the results without a flag or range of their own when a later result brings a new range, and only then", () => {
    const before = labs(at(1), [{ loinc_code: "718-7", value_numeric: 11, unit: "g/dL" }]);
    const ranged = labs(at(2), [{ loinc_code: "718-7", value_numeric: 13, unit: "g/dL", reference_range_low: 12, reference_range_high: 16 }]);
    const olderRange = labs(at(3), [{ loinc_code: "718-7", value_numeric: 10, unit: "g/dL", reference_range_low: 8, reference_range_high: 10 }], { collection_datetime: at(1, 6) });
    const [hb] = payload(given([before, ranged, olderRange]), "lab_results").results;
    expect(hb).toMatchObject({ reference_range_low: 12, reference_range_high: 16 });
    // 10 keeps the flag of the range it came with; 11 had none and follows the test's.
    expect(hb?.history.map((h) => [h.value_numeric, h.abnormal_flag])).toEqual([[10, "N"], [11, "L"], [13, "N"]]);
    const [alone] = payload(given([before]), "lab_results").results;
    expect(alone?.latest).toMatchObject({ abnormal_flag: null, flag_source: "test_range" });
  });
});

describe("questionnaires", () => {
  const phq = (t: string, total: number, change?: Record<string, unknown>) =>
    log("questionnaire_response", t, {
      instrument: { instrument_id: "PHQ-9", instrument_type: "validated" },
      administration: { administration_mode: "patient_self_report" },
      item_responses: [{ item_number: 1, response_value: 1 }],
      scores: { total_score: total, severity_category: total >= 10 ? "moderate" : "mild" },
      ...(change ? { change } : {}),
    });

  it("keeps the latest score per instrument with its change against the prior one", () => {
    const s = given([phq(at(1), 14), phq(at(8), 8, { change_classification: "improved", minimally_important_difference: 5 }), log("questionnaire_response", at(9), { instrument: { instrument_id: "gad-7", instrument_type: "validated" }, scores: { total_score: 5 } })]);
    const [p, g] = payload(s, "questionnaires").instruments;
    expect(p).toMatchObject({ instrument_id: "PHQ-9", administrations: 2, latest: { total_score: 8, severity_category: "mild" } });
    expect(p?.change).toEqual({ prior_score: 14, prior_date: at(1), change: -6, basis: "history", direction: "decreased", exceeds_mid: true, classification: "improved" });
    expect(p?.history.map((h) => h.total_score)).toEqual([14, 8]);
    expect(g?.change).toBeNull();
  });

  it("computes the change between the two latest administrations by event time", () => {
    const s = given([phq(at(8), 8), phq(at(1), 14), phq(at(4), 10)]);
    expect(payload(s, "questionnaires").instruments[0]?.change).toMatchObject({ prior_score: 10, change: -2 });
  });

  it("keeps standalone item responses in a bounded recent list", () => {
    const s = given([log("questionnaire_item_response", at(1), { question: "Pain today?", response_value: 4, response_scale_max: 10, context: "check_in" })]);
    expect(payload(s, "questionnaires").item_responses).toEqual([expect.objectContaining({ question: "Pain today?", response_value: 4, context: "check_in" })]);
  });
});

describe("clinical_context", () => {
  it("collects notes, findings, imaging, variants, measurements, responses and functional status", () => {
    const s = given([
      log("clinical_note", at(1), { note_type: "progress_note", source: "ehr", sections: [{ section_label: "Plan", content: "Continue." }] }),
      log("clinical_finding", at(1), { findings: [{ description: "Edema", negation: false }, { description: "Rash", negation: true }] }),
      log("imaging_result", at(2), { study_date: "2025-03-02", findings: [{ modality: "CT", impression: "Stable disease" }] }),
      log("genomic_variant", at(2), { variants: [{ gene: "BRCA1", variant_designation: "c.68_69delAG", classification: "VUS" }] }),
      log("genomic_variant", at(3), { variants: [{ gene: "brca1", variant_designation: "c.68_69delAG", classification: "pathogenic" }] }),
      log("clinical_measurement", at(2), { measurements: [{ measurement_type: "ejection_fraction", value_numeric: 50, unit: "%" }] }),
      log("clinical_measurement", at(4), { measurements: [{ measurement_type: "Ejection_Fraction ", value_numeric: 45, unit: "%" }] }),
      log("treatment_response_assessment", at(4), { assessments: [{ response_category: "PR", assessment_method: "RECIST 1.1", target_lesions_sum_mm: 42 }] }),
      log("functional_class", at(1), { instrument: "ecog", class: 1 }),
      log("functional_class", at(5), { instrument: "ECOG", class: 2, reported_by: "clinician" }),
    ]);
    const d = payload(s, "clinical_context");
    expect(d.notes[0]).toMatchObject({ note_type: "progress_note", sections: [{ section_label: "Plan", content: "Continue." }] });
    expect(d.findings.map((f) => [f.description, f.negation])).toEqual([["Edema", false], ["Rash", true]]);
    expect(d.imaging[0]).toMatchObject({ modality: "CT", study_date: "2025-03-02" });
    expect(d.genomic_variants).toEqual([expect.objectContaining({ gene: "brca1", classification: "pathogenic" })]);
    expect(d.measurements).toHaveLength(1);
    expect(d.measurements[0]?.latest.value_numeric).toBe(45);
    expect(d.treatment_responses[0]).toMatchObject({ response_category: "PR", details: { target_lesions_sum_mm: 42 } });
    expect(d.functional_status[0]).toMatchObject({ instrument: "ecog", latest: { class: 2, reported_by: "clinician" } });
  });

  it("replaces an encounter, plan item, goal or action sent again with the same id", () => {
    const s = given([
      log("care_goal", at(1), { goal_id: "g1", description: "Walk daily", status: "active" }),
      log("care_goal", at(2), { goal_id: "g1", status: "achieved" }),
      log("care_encounter", at(1), { encounter_type: "telehealth" }),
      log("clinical_plan_item", at(1), { plan_item_id: "p1", description: "CBC" }),
      log("care_action", at(1), { description: "Called patient" }),
      log("unstructured_report", at(1), { report_id: "r1", report_type: "letter", content: "Letter" }),
      log("care_action", at(1), { action_id: "x1", action_type: "call", status: "completed" }),
      log("care_action", at(2), { action_id: "x1", action_type: "call", status: "entered_in_error" }),
    ]);
    const d = payload(s, "clinical_context");
    expect(d.goals).toEqual([expect.objectContaining({ key: "g1", status: "achieved", timestamp: at(2) })]);
    expect([d.encounters.length, d.plan_items.length, d.care_actions.length, d.reports.length]).toEqual([1, 1, 1, 1]);
  });

  it("withdraws a goal whose lifecycle_status says it was entered in error", () => {
    const s = given([
      log("care_goal", at(1), { goal_id: "g1", description: "Walk daily", lifecycle_status: "active" }),
      log("care_goal", at(1), { goal_id: "g2", description: "Sleep 8 h", lifecycle_status: "active" }),
      log("care_goal", at(2), { goal_id: "g1", lifecycle_status: "entered_in_error" }),
    ]);
    expect(payload(s, "clinical_context").goals.map((g) => g.key)).toEqual(["g2"]);
  });
});
