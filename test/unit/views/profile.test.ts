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
