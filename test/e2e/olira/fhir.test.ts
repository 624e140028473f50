import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../../support/stack.js";
import { BATCH_RESULT, expectSdkParses, sdkClient, type SdkClient } from "../../support/olira-sdk.js";

/**
 * The SDK's log_fhir (olira-compat §10 and §D): `{"patient_id", "resource"}` (later with
 * `"idempotency_key"`), the answer parsed as a BatchResult, `accepted == 0` raised as a
 * ValidationError with errors[0].message. The resources follow the SDK's documented
 * examples: a Condition, a MedicationRequest, an Appointment, a CarePlan.
 */
let t: TestStack;
let sdk: SdkClient;
let pid: string;

const condition = {
  resourceType: "Condition",
  clinicalStatus: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/condition-clinical", code: "active" }] },
  code: { coding: [{ system: "http://hl7.org/fhir/sid/icd-10-cm", code: "C50.911", display: "Malignant neoplasm of right female breast" }] },
  subject: { reference: "Patient/epic-123" },
  onsetDateTime: "2026-01-15",
};
const medicationRequest = {
  resourceType: "MedicationRequest", id: "mr-1", status: "active", intent: "order",
  medicationCodeableConcept: { coding: [{ system: "http://www.nlm.nih.gov/research/umls/rxnorm", code: "198240", display: "Tamoxifen 20 MG Oral Tablet" }] },
  subject: { reference: "Patient/epic-123" }, authoredOn: "2026-02-01",
  dosageInstruction: [{ text: "20 mg daily", timing: { code: { text: "QD" } }, doseAndRate: [{ doseQuantity: { value: 20, unit: "mg" } }] }],
};
const appointment = {
  resourceType: "Appointment", id: "appt-1", status: "booked", start: "2026-03-10T14:00:00Z", end: "2026-03-10T14:30:00Z",
  serviceType: [{ text: "Oncology follow-up" }], participant: [{ actor: { reference: "Patient/epic-123" }, status: "accepted" }],
};
const carePlan = {
  resourceType: "CarePlan", id: "cp-1", status: "active", intent: "plan", title: "Adjuvant active treatment", subject: { reference: "Patient/epic-123" },
  period: { start: "2026-02-01" },
  activity: [{ detail: { kind: "Appointment", status: "scheduled", description: "Follow-up visit after cycle 1", scheduledString: "in 3 weeks" } }],
};

beforeAll(async () => {
  t = await startStack({});
  sdk = sdkClient(t.app, t.adminKey);
  pid = (await sdk.post("/v1/patients", { first_name: "Fhir", sex: "unknown", timezone: "UTC", external_identifiers: [] })).json().id;
});
afterAll(async () => {
  await t?.close();
});

describe("log_fhir", () => {
  it("maps each documented example to events the SDK parses as accepted", async () => {
    const made: Record<string, number> = {};
    for (const resource of [condition, medicationRequest, appointment, carePlan]) {
      const r = await sdk.post("/v1/fhir/resource", { patient_id: pid, resource, idempotency_key: null });
      expect(r.statusCode, r.body).toBe(200);
      expectSdkParses(r.json(), BATCH_RESULT);
      expect(r.json().failed, r.body).toBe(0);
      made[resource.resourceType] = r.json().accepted;
    }
    // One plan: a follow-up item and a treatment-phase update.
    expect(made).toEqual({ Condition: 1, MedicationRequest: 1, Appointment: 1, CarePlan: 2 });
    const stable = JSON.stringify((await sdk.get(`/v1/state/${pid}/stable`)).json());
    expect(stable).toContain("C50.911");
    expect(stable).toContain("Tamoxifen");
  });

  it("takes example 14's CarePlan (an activity without a status) and resources sent without an id, so the SDK does not raise", async () => {
    const plan = {
      resourceType: "CarePlan", id: "plan-retry-demo", status: "active", intent: "plan", subject: { reference: `Patient/${pid}` },
      category: [{ coding: [{ system: "http://hl7.org/fhir/us/core/CodeSystem/careplan-category", code: "assess-plan" }] }],
      activity: [{ detail: { description: "Follow-up oncology visit in 4 weeks" } }],
    };
    const { id: _a, ...anonymousAppointment } = { ...appointment, start: "2026-04-10T14:00:00Z", end: "2026-04-10T14:30:00Z" };
    const { id: _p, ...anonymousPlan } = { ...carePlan, title: "Plan without an id" };
    for (const resource of [plan, anonymousAppointment, anonymousPlan]) {
      const body = { patient_id: pid, resource, idempotency_key: `no-id-${resource.resourceType}-${Object.keys(resource).length}` };
      const r = await sdk.post("/v1/fhir/resource", body);
      expect(r.statusCode, r.body).toBe(200);
      expect(r.json(), r.body).toMatchObject({ failed: 0 });
      expect(r.json().accepted).toBeGreaterThanOrEqual(1);
      // Sent again: the same items, nothing new.
      expect((await sdk.post("/v1/fhir/resource", body)).json()).toMatchObject({ failed: 0, duplicates: r.json().accepted });
    }
  });

  it("answers a retry with the same idempotency_key with accepted >= 1, so the SDK does not raise", async () => {
    const body = { patient_id: pid, resource: { ...condition, id: "keyed" }, idempotency_key: "epic-cond-keyed" };
    const first = (await sdk.post("/v1/fhir/resource", body)).json();
    const retry = (await sdk.post("/v1/fhir/resource", body)).json();
    expectSdkParses(retry, BATCH_RESULT);
    expect(first.accepted).toBe(1);
    expect(retry).toMatchObject({ accepted: 1, failed: 0, duplicates: 1 });
  });

  it("answers 422 without a resourceType, and accepted 0 with the reason first for a type it does not map", async () => {
    expect((await sdk.post("/v1/fhir/resource", { patient_id: pid, resource: { status: "completed" } })).statusCode).toBe(422);
    const r = await sdk.post("/v1/fhir/resource", { patient_id: pid, resource: { resourceType: "SupplyDelivery", status: "completed" } });
    expect(r.statusCode).toBe(200);
    expectSdkParses(r.json(), BATCH_RESULT);
    expect(r.json()).toMatchObject({ accepted: 0, failed: 1 });
    expect(r.json().errors[0].message).toMatch(/SupplyDelivery is not mapped to patient logs; mapped types: .*Observation/);
  });
});
