import { describe, expect, it } from "vitest";
import type { CarePlan, ServiceRequest } from "@medplum/fhirtypes";
import { derived, refused } from "./derive-helpers.js";
import { folded } from "./fold-helpers.js";

const mammogram: ServiceRequest = {
  resourceType: "ServiceRequest",
  id: "sr-mammo",
  status: "active",
  intent: "order",
  category: [{ coding: [{ system: "http://snomed.info/sct", code: "363679005", display: "Imaging" }] }],
  code: { coding: [{ system: "http://loinc.org", code: "24606-6", display: "MG Breast Screening" }], text: "Annual mammogram" },
  subject: { reference: "Patient/example" },
};

/**
 * After the R4 specification's example plan (activities in detail and by reference, a goal,
 * an author), as olira-compat D's example: a plan after treatment that sets follow-up
 * and says the patient is now under surveillance. Written anew.
 */
const surveillance: CarePlan = {
  resourceType: "CarePlan",
  id: "cp-surv",
  status: "active",
  intent: "plan",
  category: [{ coding: [{ system: "http://snomed.info/sct", code: "395082007", display: "Cancer care plan" }] }],
  title: "Breast cancer surveillance after adjuvant therapy",
  subject: { reference: "Patient/example" },
  encounter: { reference: "Encounter/enc-0412" },
  period: { start: "2025-06-01" },
  created: "2025-05-28",
  author: { reference: "Practitioner/dr-hale", display: "Dr. Imogen Hale" },
  goal: [{ reference: "Goal/goal-recurrence-free" }],
  activity: [
    {
      detail: {
        kind: "Appointment", status: "scheduled", description: "Oncology review with examination",
        code: { coding: [{ system: "http://snomed.info/sct", code: "390906007", display: "Follow-up encounter" }] },
        scheduledPeriod: { start: "2025-12-01", end: "2025-12-15" },
      },
    },
    { reference: { reference: "ServiceRequest/sr-mammo" } },
    {
      id: "endocrine",
      detail: {
        kind: "MedicationRequest", status: "in-progress",
        code: { coding: [{ system: "http://www.nlm.nih.gov/research/umls/rxnorm", code: "10324", display: "Tamoxifen" }], text: "Tamoxifen 20 mg daily" },
        goal: [{ reference: "Goal/goal-endocrine" }],
      },
    },
  ],
};

const items = (logs: ReturnType<typeof derived>) => logs.filter((l) => l.log_type === "clinical_plan_item").map((l) => l.payload);

describe("CarePlan", () => {
  it("becomes a clinical_plan_item per activity and a treatment_phase for the surveillance it announces", () => {
    const logs = derived(surveillance, mammogram);
    expect(logs.map((l) => l.log_type)).toEqual(["clinical_plan_item", "clinical_plan_item", "clinical_plan_item", "treatment_phase"]);
    expect(items(logs)).toEqual([
      {
        plan_item_id: "CarePlan/cp-surv/activity/0", item_type: "appointment", description: "Oncology review with examination", status: "scheduled",
        scheduled_date: "2025-12-01", ordered_by: { name: "Dr. Imogen Hale" }, goal_id: "goal-recurrence-free", encounter_id: "enc-0412", code: "390906007", code_system: "SNOMED",
      },
      { plan_item_id: "ServiceRequest/sr-mammo", item_type: "imaging", description: "Annual mammogram", status: "not_started", ordered_by: { name: "Dr. Imogen Hale" }, goal_id: "goal-recurrence-free", encounter_id: "enc-0412" },
      { plan_item_id: "CarePlan/cp-surv/activity/endocrine", item_type: "medication", description: "Tamoxifen 20 mg daily", status: "in_progress", ordered_by: { name: "Dr. Imogen Hale" }, goal_id: "goal-endocrine", encounter_id: "enc-0412" },
    ]);
    expect(logs[3]).toMatchObject({ timestamp: "2025-06-01T00:00:00Z", payload: { new_phase: "surveillance", effective_date: "2025-06-01", changed_by: "clinician" } });
  });

  it("lands in clinical_context's plan items and the condition_diagnosis treatment phase", () => {
    const logs = derived(surveillance, mammogram);
    expect(folded("clinical_context", logs).plan_items.map((p) => [p.key, p.status])).toEqual(
      expect.arrayContaining([["CarePlan/cp-surv/activity/0", "scheduled"], ["ServiceRequest/sr-mammo", "not_started"], ["CarePlan/cp-surv/activity/endocrine", "in_progress"]]),
    );
    expect(folded("condition_diagnosis", logs).treatment_phase).toMatchObject({ current: "surveillance", effective_date: "2025-06-01", changed_by: "clinician" });
  });

  it("reads palliative care from the category, and changes no phase for a draft or a plan that names none", () => {
    const palliative = { ...surveillance, title: "Symptom plan", category: [{ text: "Palliative care" }] };
    expect(derived(palliative, mammogram).at(-1)!.payload).toMatchObject({ new_phase: "palliative" });
    expect(derived({ ...surveillance, status: "draft" }, mammogram).map((l) => l.log_type)).not.toContain("treatment_phase");
    expect(derived({ ...surveillance, title: "Weight management", category: [] }, mammogram).map((l) => l.log_type)).not.toContain("treatment_phase");
  });

  it("takes its activities with it when revoked or entered in error, and withdraws them from the state", () => {
    expect(items(derived({ ...surveillance, status: "revoked" }, mammogram)).map((p) => p.status)).toEqual(["cancelled", "cancelled", "cancelled"]);
    const wrong = derived({ ...surveillance, status: "entered-in-error" }, mammogram);
    expect(wrong.map((l) => l.log_type)).not.toContain("treatment_phase");
    expect(folded("clinical_context", derived(surveillance, mammogram), wrong).plan_items).toEqual([]);
  });

  it("refuses an activity that says nothing of what is planned, and one of unknown status, each at its place", () => {
    const silent = { ...surveillance, activity: [surveillance.activity![0]!, { reference: { reference: "ServiceRequest/not-in-bundle" } }] };
    expect(refused(silent)).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["activity", 1] }] });
    const unknown = { ...surveillance, activity: [{ detail: { ...surveillance.activity![0]!.detail!, status: "unknown" as const } }] };
    expect(refused(unknown)).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["activity", 0, "detail", "status"] }] });
  });

  it("refuses a plan or activity status outside the R4 codes, at its place, rather than reading it as not started", () => {
    expect(refused({ ...surveillance, status: "bogus" as never })).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["status"] }] });
    const bogus = { ...surveillance, activity: [{ detail: { ...surveillance.activity![0]!.detail!, status: "bogus" as never } }] };
    expect(refused(bogus)).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["activity", 0, "detail", "status"], message: expect.stringMatching(/not-started, scheduled/) }] });
  });

  it("takes an activity without the status R4 requires (the hosted SDK's own example sends none) with its plan's", () => {
    // examples/14_idempotent_retries.py of the Olira SDK.
    const example: CarePlan = {
      resourceType: "CarePlan", id: "plan-retry-demo", status: "active", intent: "plan", subject: { reference: "Patient/p" },
      category: [{ coding: [{ system: "http://hl7.org/fhir/us/core/CodeSystem/careplan-category", code: "assess-plan" }] }],
      activity: [{ detail: { description: "Follow-up oncology visit in 4 weeks" } as never }],
    };
    expect(items(derived(example))).toEqual([expect.objectContaining({ description: "Follow-up oncology visit in 4 weeks", status: "not_started" })]);
    // Another required element left out is still invalid.
    expect(refused({ ...example, intent: undefined as never })).toMatchObject({ code: "fhir_invalid", issues: [{ path: ["intent"] }] });
  });

  it("refuses invalid FHIR (an activity with both a reference and a detail, cpl-3) with its path", () => {
    const both = { ...surveillance, activity: [{ ...surveillance.activity![0]!, reference: { reference: "ServiceRequest/sr-mammo" } }] };
    expect(refused(both, mammogram)).toMatchObject({ code: "fhir_invalid" });
    expect(refused(both, mammogram).message).toMatch(/cpl-3/);
  });
});
