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
    expect(r[0].history.map((h) => h.value_numeric)).toEqual([13.2, 9.1]);
    expect(r[1]).toMatchObject({ loinc_code: null, test_name: "ferritin", latest: { value_numeric: 20 } });
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
    expect(hb.latest).toMatchObject({ value_numeric: 12, timestamp: at(2) });
    expect(hb.unit).toBe("g/dL");
    expect(payload(s, "lab_results").abnormal).toEqual([]);
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
    expect(p.change).toEqual({ prior_score: 14, prior_date: at(1), change: -6, direction: "decreased", exceeds_mid: true, classification: "improved" });
    expect(p.history.map((h) => h.total_score)).toEqual([14, 8]);
    expect(g.change).toBeNull();
  });

  it("computes the change between the two latest administrations by event time", () => {
    const s = given([phq(at(8), 8), phq(at(1), 14), phq(at(4), 10)]);
    expect(payload(s, "questionnaires").instruments[0].change).toMatchObject({ prior_score: 10, change: -2 });
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
    expect(d.measurements[0].latest.value_numeric).toBe(45);
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
});
