import { describe, expect, it } from "vitest";
import type { Goal } from "@medplum/fhirtypes";
import { derived, refused } from "./derive-helpers.js";
import { folded } from "./fold-helpers.js";

/** After the R4 specification's example of a weight goal held for a while, with a target range (written anew). */
const weight: Goal = {
  resourceType: "Goal",
  id: "goal-weight",
  lifecycleStatus: "on-hold",
  achievementStatus: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/goal-achievement", code: "no-progress" }] },
  category: [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/goal-category", code: "dietary", display: "Dietary" }] }],
  description: { text: "Bring weight to between 68 and 75 kg" },
  subject: { reference: "Patient/example" },
  startDate: "2025-02-01",
  target: [{
    measure: { coding: [{ system: "http://loinc.org", code: "29463-7", display: "Body weight" }] },
    detailRange: { low: { value: 68, unit: "kg", system: "http://unitsofmeasure.org", code: "kg" }, high: { value: 75, unit: "kg", system: "http://unitsofmeasure.org", code: "kg" } },
    dueDate: "2025-12-31",
  }],
  statusDate: "2025-06-10",
  statusReason: "Paused during chemotherapy",
  expressedBy: { reference: "Patient/example" },
};

const hba1c: Goal = {
  resourceType: "Goal",
  id: "goal-a1c",
  lifecycleStatus: "active",
  achievementStatus: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/goal-achievement", code: "improving" }] },
  description: { coding: [{ system: "http://snomed.info/sct", code: "698360004", display: "Diabetes self management plan" }], text: "HbA1c below 7%" },
  subject: { reference: "Patient/example" },
  startDate: "2025-01-15",
  target: [{ measure: { coding: [{ system: "http://loinc.org", code: "4548-4", display: "Hemoglobin A1c" }] }, detailQuantity: { value: 7, comparator: "<", unit: "%" } }],
  expressedBy: { reference: "Practitioner/dr-hale", display: "Dr. Imogen Hale" },
};

describe("Goal", () => {
  it("becomes a care_goal with its statuses, category, target and who expressed it", () => {
    const [log, ...rest] = derived(hba1c);
    expect(rest).toEqual([]);
    expect(log).toMatchObject({
      log_type: "care_goal",
      timestamp: "2025-01-15T00:00:00Z",
      payload: {
        goal_id: "goal-a1c", description: "HbA1c below 7%", lifecycle_status: "active", achievement_status: "improving", start_date: "2025-01-15",
        target: { measure: "Hemoglobin A1c", value_numeric: 7, unit: "%" }, expressed_by: "clinician",
      },
    });
  });

  it("keeps a target range under extensions, as the single target value cannot hold it", () => {
    expect(derived(weight)[0]).toMatchObject({
      timestamp: "2025-06-10T00:00:00Z",
      payload: {
        lifecycle_status: "on_hold", achievement_status: "no_change", category: "Dietary", expressed_by: "patient",
        target: { measure: "Body weight", unit: "kg", due_date: "2025-12-31" }, extensions: { target_range: { low: 68, high: 75 } },
      },
    });
  });

  it("lands in clinical_context's goals, replaced by a later version and withdrawn by entered-in-error", () => {
    const done = { ...hba1c, lifecycleStatus: "completed" as const, statusDate: "2025-09-01", achievementStatus: { coding: [{ code: "achieved" }] } };
    const doc = folded("clinical_context", derived(hba1c), derived(weight), derived(done));
    expect(doc.goals).toHaveLength(2);
    expect(doc.goals.find((g) => g.key === "goal-a1c")).toMatchObject({ lifecycle_status: "completed", achievement_status: "achieved", description: "HbA1c below 7%" });
    const wrong = derived({ ...weight, lifecycleStatus: "entered-in-error", statusDate: "2025-07-01" });
    expect(folded("clinical_context", derived(weight), wrong).goals).toEqual([]);
  });

  it("identifies a goal by its identifier without an id, and by its content with neither", () => {
    const { id: _id, ...anonymous } = hba1c;
    expect(derived(anonymous)[0]!.payload.goal_id).toMatch(/^content-[0-9a-f]{32}$/);
    expect(derived({ ...anonymous, identifier: [{ system: "urn:ehr:goals", value: "G-5521" }] })[0]!.payload.goal_id).toBe("G-5521");
  });

  it("refuses invalid FHIR (a goal without a description) with the element's path", () => {
    const { description: _d, ...vague } = hba1c;
    expect(refused(vague as Goal)).toMatchObject({ code: "fhir_invalid", issues: [{ path: ["description"] }] });
  });
});
