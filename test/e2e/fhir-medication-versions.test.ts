import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MedicationRequest, MedicationStatement, Resource } from "@medplum/fhirtypes";
import { startStack, type TestStack } from "../support/stack.js";

/**
 * Versions of one MedicationRequest or MedicationStatement sent to POST /v1/fhir/resource,
 * read back as FHIR: a stop holds against an older version delivered after it, and is
 * dated when the medication stopped.
 */
let t: TestStack;

const RXNORM = "http://www.nlm.nih.gov/research/umls/rxnorm";
const post = (url: string, payload: unknown) => t.app.inject({ method: "POST", url, headers: t.auth, payload: payload as object });
const newPatient = async (name: string): Promise<string> => (await post("/v1/patients", { first_name: name })).json().id;
const send = async (pid: string, resource: Resource) => {
  const r = (await post("/v1/fhir/resource", { patient_id: pid, resource })).json();
  expect(r, JSON.stringify(r)).toMatchObject({ accepted: 1, failed: 0, results: [{ status: "accepted" }] });
};
const listed = async (pid: string, query = ""): Promise<string[]> => {
  const r = await t.app.inject({ method: "GET", url: `/v1/state/${pid}/fhir/MedicationStatement${query}`, headers: t.auth });
  expect(r.statusCode, r.body).toBe(200);
  return (r.json().entry ?? []).map((e: { resource: MedicationStatement }) => e.resource.medicationCodeableConcept?.coding?.[0]?.code);
};

beforeAll(async () => {
  t = await startStack({});
});

afterAll(async () => {
  await t?.close();
});

describe("medication versions over FHIR", () => {
  it("keeps a stopped MedicationRequest stopped when an older active version of it arrives later", async () => {
    const pid = await newPatient("Mira");
    const version = (status: MedicationRequest["status"], lastUpdated: string): MedicationRequest => ({
      resourceType: "MedicationRequest", id: "mr9", status, intent: "order", subject: { reference: "Patient/ehr-9" }, authoredOn: "2026-06-01T10:00:00Z", meta: { lastUpdated },
      medicationCodeableConcept: { coding: [{ system: RXNORM, code: "310965", display: "ibuprofen 200 MG Oral Tablet" }] },
    });
    await send(pid, version("stopped", "2026-09-01T10:00:00Z"));
    await send(pid, version("active", "2026-06-01T10:00:00Z"));
    expect(await listed(pid)).toEqual([]);
    // It was taken from its authoredOn until the stop was recorded.
    expect(await listed(pid, "?as_of=2026-07-01T00:00:00Z")).toEqual(["310965"]);
  });

  it("dates a MedicationStatement's stop at its period's end: the summary as of before it still lists the medication", async () => {
    const pid = await newPatient("Otto");
    const amlodipine = { coding: [{ system: RXNORM, code: "197361", display: "amlodipine 5 MG Oral Tablet" }] };
    const statement = (extra: Partial<MedicationStatement>): MedicationStatement =>
      ({ resourceType: "MedicationStatement", id: "ms1", status: "active", subject: { reference: "Patient/ehr-o" }, medicationCodeableConcept: amlodipine, ...extra });
    await send(pid, statement({ effectiveDateTime: "2026-06-01" }));
    await send(pid, statement({ status: "stopped", effectivePeriod: { start: "2026-06-01", end: "2026-11-01" } }));
    const summary = await t.app.inject({ method: "GET", url: `/v1/state/${pid}/fhir/summary?as_of=2026-08-01T00:00:00Z`, headers: t.auth });
    expect(summary.statusCode, summary.body).toBe(200);
    const codes = summary.json().entry.filter((e: { resource: Resource }) => e.resource.resourceType === "MedicationStatement")
      .map((e: { resource: MedicationStatement }) => e.resource.medicationCodeableConcept?.coding?.[0]?.code);
    expect(codes).toEqual(["197361"]);
    expect(await listed(pid)).toEqual([]);
  });
});
