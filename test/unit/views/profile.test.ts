import { describe, expect, it } from "vitest";
import { emptyPatientState } from "../../../readmodels/patient-state.js";
import { renderView } from "../../../readmodels/views/index.js";
import { at, given, log } from "../readmodels/given.js";
import { blockOf, profileLogs, shape } from "./fixtures.js";

describe("profile_snapshot", () => {
  const f = profileLogs();
  const v = renderView("profile_snapshot", given(f.logs));

  it("renders one long-term block per profile topic and the missing essentials as temp", () => {
    expect(shape(v)).toEqual([
      ["demographics", "long_term"], ["conditions", "long_term"], ["allergies", "long_term"], ["care_team", "long_term"],
      ["insurance", "long_term"], ["pharmacy", "long_term"], ["preferences", "long_term"], ["social_determinants", "long_term"],
      ["immunizations", "long_term"], ["family_history", "long_term"], ["devices", "long_term"], ["missing_essentials", "temp"],
    ]);
  });

  it("traces each block to the logs that asserted its facts", () => {
    expect(blockOf(v, "demographics").refs).toEqual([f.demo.id]);
    expect(blockOf(v, "conditions").refs).toEqual([f.cancer.id, f.htn.id, f.phase.id].sort());
    expect(blockOf(v, "allergies").refs).toEqual([f.allergy.id]);
    expect(blockOf(v, "devices").refs).toEqual([f.watch.id]);
  });

  it("shows conditions with the primary one marked and the current treatment phase", () => {
    expect(blockOf(v, "conditions").text.split("\n")).toEqual([
      "- **Breast cancer** (primary): active, stage II, diagnosed 2024-11-02 (ICD-10 C50.9)",
      "- **Hypertension**: active",
      "- **Treatment phase**: active treatment since 2025-03-04 (set by clinician)",
    ]);
    expect(blockOf(v, "allergies").text).toBe("- **Penicillin** (medication): active, high criticality, reactions: hives");
  });

  it("asks only for the essentials that are missing", () => {
    expect(blockOf(v, "missing_essentials").text).toBe("- No date of birth on file: ask for it\n- No emergency contact on file: ask for one");
    const complete = given([...f.logs, log("demographics", at(9), { dob: "1815-12-10" }), log("emergency_contact", at(9), { name: "Jane Doe", relationship: "sister", phone: "+15550100" })]);
    const cv = renderView("profile_snapshot", complete);
    expect(cv.temp).toEqual([]);
    expect(blockOf(cv, "emergency_contacts").text).toBe("- **Jane Doe** (sister): +15550100");
    expect(blockOf(cv, "demographics").text).toContain("**Date of birth**: 1815-12-10");
  });

  it("shows the patient record's date of birth when no demographics log gave one", () => {
    const withRecord = { ...given(f.logs), date_of_birth: "1950-05-01" };
    const view = renderView("profile_snapshot", withRecord);
    const b = blockOf(view, "demographics");
    expect(b.text).toBe("- **Name**: Ada Lovelace\n- **Date of birth**: 1950-05-01 (patient record)\n- **Sex**: female\n- **Language**: en");
    expect(blockOf(view, "missing_essentials").text).not.toContain("date of birth");
    expect(b.data).toMatchObject({ name: "Ada Lovelace", dob: "1950-05-01", dob_source: "patient_record" });
    expect(b.refs).toEqual([f.demo.id]);
    const logged = blockOf(renderView("profile_snapshot", { ...given([...f.logs, log("demographics", at(9), { dob: "1815-12-10" })]), date_of_birth: "1950-05-01" }), "demographics");
    expect(logged.text).toContain("**Date of birth**: 1815-12-10\n");
    expect(logged.data).not.toHaveProperty("dob_source");
    const recordOnly = renderView("profile_snapshot", { ...given([f.cancer]), date_of_birth: "1950-05-01" });
    expect(blockOf(recordOnly, "demographics")).toMatchObject({ text: "- **Date of birth**: 1950-05-01 (patient record)", refs: [] });
  });

  it("shows a calendar date sent as midnight UTC as the date written, and converts other instants to the patient's zone", () => {
    const logs = [
      log("demographics", at(1), { name: "Ada", dob: "1950-05-01T00:00:00Z" }),
      log("condition", at(2), { disease_type: "Breast cancer", diagnosis_date: "2026-03-01T00:00:00Z", onset_date: "2026-02-10T00:00:00.000+00:00" }),
      log("condition", at(2, 13), { disease_type: "Hypertension", diagnosis_date: "2026-03-01T02:00:00Z" }),
      log("treatment_phase", at(4), { new_phase: "active_treatment", effective_date: "2026-03-04T00:00:00Z" }),
      log("immunization", at(7), { vaccine_name: "Influenza", occurrence_date: "2024-10-01T00:00:00.000Z" }),
    ];
    const v = renderView("profile_snapshot", given(logs, "America/New_York"));
    expect(blockOf(v, "demographics").text).toBe("- **Name**: Ada\n- **Date of birth**: 1950-05-01");
    expect(blockOf(v, "conditions").text.split("\n")).toEqual([
      "- **Breast cancer**: active, diagnosed 2026-03-01, onset 2026-02-10",
      "- **Hypertension**: active, diagnosed 2026-02-28",
      "- **Treatment phase**: active treatment since 2026-03-04",
    ]);
    expect(blockOf(v, "immunizations").text).toBe("- **Influenza**: 2024-10-01");
    const record = renderView("profile_snapshot", { ...given(logs.slice(1), "America/New_York"), date_of_birth: "1950-05-01T00:00:00Z" });
    expect(blockOf(record, "demographics").text).toBe("- **Date of birth**: 1950-05-01 (patient record)");
  });

  it("shows the addresses list once it supersedes the single address, and the single one if written later", () => {
    const single = log("demographics", at(1), { address: { street: "1 A", city: "B" } });
    const list = log("demographics", at(2), { addresses: [{ city: "C" }, { street: "5 D", city: "E" }] });
    const superseded = renderView("profile_snapshot", given([single, list]));
    expect(blockOf(superseded, "demographics").text).toBe("- **Address**: C; 5 D, E");
    expect(blockOf(superseded, "demographics").data).toEqual({ addresses: [{ city: "C" }, { street: "5 D", city: "E" }] });
    const legacyLater = renderView("profile_snapshot", given([list, log("demographics", at(3), { address: { street: "9 Z", city: "Y" } })]));
    expect(blockOf(legacyLater, "demographics").text).toBe("- **Address**: 9 Z, Y");
    expect(blockOf(legacyLater, "demographics").data).toEqual({ address: { street: "9 Z", city: "Y" } });
    const sameTime = renderView("profile_snapshot", given([log("demographics", at(1), { address: { city: "B" }, addresses: [{ city: "C" }] })]));
    expect(blockOf(sameTime, "demographics").text).toBe("- **Address**: C");
  });

  it("still asks for every essential when the patient has no data at all", () => {
    const e = renderView("profile_snapshot", emptyPatientState("pat_1"));
    expect(e.blocks).toEqual([]);
    expect(e.valid_from).toBeNull();
    expect((blockOf(e, "missing_essentials").data as { missing: string }[]).map((m) => m.missing)).toEqual(["date_of_birth", "emergency_contact", "allergies", "primary_condition"]);
  });
});

describe("profile_snapshot: the last encounter", () => {
  it("gives the last encounter held, its note's sections and the open plan and goals, each traced to its log", () => {
    const earlier = log("care_encounter", at(2), { encounter_id: "enc-1", status: "finished", encounter_class: "ambulatory", period: { start: "2025-03-02T09:00:00Z" } });
    const visit = log("care_encounter", at(10), {
      encounter_id: "enc-2", status: "finished", encounter_class: "ambulatory", encounter_type: "oncology_follow_up",
      period: { start: "2025-03-10T09:00:00Z", end: "2025-03-10T09:30:00Z" }, reason: "Cycle 3 review", practitioner: { name: "Dr. Rivera" },
    });
    const planned = log("care_encounter", at(11), { encounter_id: "enc-3", status: "planned", period: { start: "2025-04-01T09:00:00Z" } });
    const oldNote = log("clinical_note", at(2), { note_type: "progress_note", encounter_id: "enc-1", sections: [{ section_label: "Plan", content: "Start cycle 1." }] });
    const note = log("clinical_note", at(10, 13), {
      note_type: "progress_note", encounter_id: "enc-2", authored_date: "2025-03-10",
      sections: [{ section_label: "Assessment", content: "Tolerating chemotherapy; grade 1 neuropathy." }, { section_label: "Plan", content: "Reduce paclitaxel dose by 20%. CBC before cycle 4." }],
    });
    const cbc = log("clinical_plan_item", at(10, 14), { plan_item_id: "pi-1", item_type: "lab", description: "CBC before cycle 4", status: "scheduled", scheduled_date: "2025-03-24", encounter_id: "enc-2" });
    const done = log("clinical_plan_item", at(3), { plan_item_id: "pi-0", item_type: "imaging", description: "Baseline CT", status: "completed", encounter_id: "enc-1" });
    const goal = log("care_goal", at(10, 15), { goal_id: "g-1", description: "Walk 30 minutes a day", lifecycle_status: "active", achievement_status: "improving" });
    const v = renderView("profile_snapshot", given([earlier, visit, planned, oldNote, note, cbc, done, goal]));
    const b = blockOf(v, "last_encounter");
    expect(b.segment).toBe("long_term");
    expect(b.text.split("\n")).toEqual([
      "- **Encounter** 2025-03-10 (ambulatory, oncology follow up) with Dr. Rivera: finished, reason: Cycle 3 review",
      "- **Note** (progress note, 2025-03-10)",
      "- **Assessment**: Tolerating chemotherapy; grade 1 neuropathy.",
      "- **Plan**: Reduce paclitaxel dose by 20%. CBC before cycle 4.",
      "- **Plan**: CBC before cycle 4 (lab, scheduled, scheduled 2025-03-24)",
      "- **Goal**: Walk 30 minutes a day (active, improving)",
    ]);
    expect(b.refs).toEqual([visit.id, note.id, cbc.id, goal.id].sort());
  });
});
