import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundle, Condition } from "@medplum/fhirtypes";
import { startStack, type TestStack } from "../support/stack.js";

/** How a resource names its patient and itself: conditional references, and resources without an id. */
let t: TestStack;
let pid: string;

const SYS = "urn:oid:1.2.36.146.595.217.0.1";
const post = (url: string, payload: unknown) => t.app.inject({ method: "POST", url, headers: t.auth, payload: payload as object });
const asthma = (extra: Partial<Condition> = {}): Condition => ({
  resourceType: "Condition", code: { coding: [{ system: "http://snomed.info/sct", code: "195967001", display: "Asthma" }] }, onsetDateTime: "2024-05-01",
  subject: { reference: "Patient/ehr-1" }, ...extra,
});

beforeAll(async () => {
  t = await startStack({});
  pid = (await post("/v1/patients", { first_name: "Ivo", external_identifiers: [{ system: SYS, value: "MRN-x" }] })).json().id;
});

afterAll(async () => {
  await t?.close();
});

describe("patient and resource references", () => {
  it("tells a conditional patient reference that it is not supported and what to send instead, not that the patient does not exist", async () => {
    const b: Bundle = { resourceType: "Bundle", type: "transaction", entry: [{ resource: asthma({ id: "cr-1", subject: { reference: `Patient?identifier=${SYS}|MRN-x` } }) }] };
    const r = await post("/v1/fhir", b);
    expect(r.statusCode, r.body).toBe(422);
    const message = JSON.stringify(r.json());
    expect(message).toMatch(/conditional reference, which is not supported: put the Patient in the Bundle with that identifier/);
    expect(message).not.toMatch(/neither a Patient entry/);
  });

  it("traces a resource sent without an id by its content, not as the patient", async () => {
    const r = (await post("/v1/fhir/resource", { patient_id: pid, resource: asthma() })).json();
    expect(r).toMatchObject({ accepted: 1 });
    const logs = (await t.app.inject({ method: "GET", url: `/v1/state/${pid}/logs?include_metadata=true`, headers: t.auth })).json().logs;
    const stored = logs.find((l: { id: string }) => l.id === r.results[0].id);
    expect(stored.trace.object_type).toBe("Condition");
    expect(stored.trace.object_id).toMatch(/^content-[0-9a-f]{32}$/);
    expect(stored.trace.object_id).not.toContain(pid);
  });
});
