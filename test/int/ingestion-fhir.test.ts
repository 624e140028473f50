import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundle, Condition, Patient } from "@medplum/fhirtypes";
import { startStack, type TestStack } from "../support/stack.js";

/** Historical ingestion of FHIR (issue 29 item 3): NDJSON as a Bulk Data export writes it, and Bundles, through the job pipeline. */
let t: TestStack;
beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "20" });
});
afterAll(async () => {
  await t?.close();
});

const inject = (method: "GET" | "POST", url: string, payload?: unknown) =>
  t.app.inject({ method, url, headers: t.auth, ...(payload !== undefined ? { payload: payload as object } : {}) });

let seq = 0;
const mrn = () => `FHIR-${process.pid}-${Date.now()}-${++seq}`;
const MRN = "urn:oid:2.16.840.1.113883.19.5";
const CLINICAL = "http://terminology.hl7.org/CodeSystem/condition-clinical";

const patient = (id: string, value: string): Patient => ({
  resourceType: "Patient",
  id,
  identifier: [{ system: MRN, value }],
  name: [{ family: "Chalmers", given: ["Peter"] }],
  gender: "male",
  birthDate: "1974-12-25",
});
const condition = (id: string, subject: string, snomed: string, text: string, extra: Partial<Condition> = {}): Condition => ({
  resourceType: "Condition",
  id,
  clinicalStatus: { coding: [{ system: CLINICAL, code: "active" }] },
  code: { coding: [{ system: "http://snomed.info/sct", code: snomed, display: text }], text },
  subject: { reference: subject },
  onsetDateTime: "2024-04-02",
  recordedDate: "2024-04-03T10:00:00Z",
  ...extra,
});

/** The app on a real socket, for the upload: the body streams. */
let served: Promise<string> | null = null;
const listening = () => (served ??= t.app.listen({ port: 0, host: "127.0.0.1" }));

async function upload(text: string): Promise<string> {
  const address = await listening();
  const u = (await inject("POST", "/v1/ingestion/upload-url", {})).json();
  const r = await fetch(`${address}${new URL(u.upload_url).pathname}`, { method: "PUT", body: text, headers: { "content-type": "application/fhir+ndjson" } });
  expect(r.status).toBe(200);
  return u.s3_key as string;
}

async function createJob(body: Record<string, unknown>): Promise<string> {
  const r = await inject("POST", "/v1/ingestion/jobs", body);
  expect(r.statusCode, r.body).toBe(201);
  return r.json().job_id as string;
}

const AT_WORK = ["queued", "validating", "inserting_patients", "inserting_logs", "replaying", "backfilling"];
async function waitJob(id: string) {
  const end = Date.now() + 30_000;
  for (;;) {
    const j = (await inject("GET", `/v1/ingestion/jobs/${id}`)).json();
    if (!AT_WORK.includes(j.status) || Date.now() > end) return j;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function patientByMrn(value: string): Promise<string | null> {
  const r = (await inject("GET", `/v1/patients?system=${encodeURIComponent(MRN)}&value=${encodeURIComponent(value)}`)).json();
  return r.patients[0]?.id ?? null;
}

const conditions = async (pid: string) => JSON.stringify((await inject("GET", `/v1/state/${pid}/stable`)).json().modules.condition_diagnosis ?? null);

describe("ingestion jobs of FHIR", () => {
  it("takes a Bulk Data NDJSON file, naming the lines it skips, and replays its Conditions once confirmed", async () => {
    const a = mrn();
    const lines = [
      condition("c1", "Patient/ehr-p1", "44054006", "Type 2 diabetes mellitus"), // before its Patient: the file is read for Patients first
      patient("ehr-p1", a),
      condition("c2", "Patient/ehr-p1", "38341003", "Hypertension"),
      { resourceType: "SupplyDelivery", id: "s1", status: "completed" }, // a type nothing maps
      condition("c3", "Patient/ehr-p1", "195967001", "Asthma", { onsetDateTime: "2025-02-30x" }), // invalid FHIR
      condition("c4", "Patient/ehr-p1", "195967001", "Asthma", { clinicalStatus: { coding: [{ system: CLINICAL, code: "bogus" }] } }), // no R4 status
    ];
    // No format given: the first line's resourceType tells.
    const id = await createJob({ s3_key: await upload(lines.map((l) => JSON.stringify(l)).join("\n") + "\n") });
    const waiting = await waitJob(id);
    expect(waiting, JSON.stringify(waiting.error_summary)).toMatchObject({
      status: "awaiting_confirmation",
      lines_total: 6,
      patients_total: 1,
      patients_created: 1,
      // The Patient's demographics (dated when the file is read: it has no meta.lastUpdated) and two Conditions.
      logs_total: 6,
      logs_staged: 3,
      logs_failed: 3,
      logs_by_event_type: { condition: 2, demographics: 1 },
    });
    expect(waiting.error_summary).toEqual([
      { line: 4, code: "fhir_unmappable", message: expect.stringMatching(/SupplyDelivery is not mapped/) },
      { line: 5, code: "fhir_invalid", message: expect.stringMatching(/onsetDateTime/) },
      { line: 6, code: "fhir_unmappable", message: expect.stringMatching(/clinicalStatus\.coding\.0\.code bogus is not a code/) },
    ]);
    const pid = (await patientByMrn(a))!;
    expect(await conditions(pid)).not.toContain("Hypertension");

    expect((await inject("POST", `/v1/ingestion/jobs/${id}/confirm`, {})).statusCode).toBe(200);
    const done = await waitJob(id);
    expect(done).toMatchObject({ status: "completed_with_errors", logs_replayed: 3 });
    const demographics = (await inject("GET", `/v1/state/${pid}/stable`)).json().modules.demographics;
    expect(JSON.stringify(demographics)).toContain("Peter Chalmers");
    const held = await conditions(pid);
    expect(held).toContain("Type 2 diabetes mellitus");
    expect(held).toContain("Hypertension");
    const logs = (await inject("GET", `/v1/state/${pid}/logs?include_metadata=true`)).json().logs;
    expect(logs.find((l: any) => l.trace?.object_id === "c2")).toMatchObject({ metadata: { fhir_reference: "Condition/c2", fhir_line: 3, ingestion_job_id: id } });

    // The same resources in a later job (inline records this time): nothing is stored twice.
    const again = await createJob({ format: "fhir", require_confirmation: false, records: lines.slice(0, 3) });
    expect(await waitJob(again)).toMatchObject({ status: "completed", patients_created: 0, logs_replayed: 3, logs_duplicate: 3 });
  });

  it("counts a resource skipped at conversion in its patient's preview logs_invalid, and one naming no patient only in the job's", async () => {
    const [a, b] = [mrn(), mrn()];
    const lines = [
      patient("prev-a", a),
      patient("prev-b", b),
      condition("pa1", "Patient/prev-a", "38341003", "Hypertension"),
      condition("pa2", "Patient/prev-a", "195967001", "Asthma", { clinicalStatus: { coding: [{ system: CLINICAL, code: "bogus" }] } }), // unmappable
      condition("pb1", "Patient/prev-b", "44054006", "Type 2 diabetes mellitus", { onsetDateTime: undefined, recordedDate: undefined }), // no clinical date
      { resourceType: "SupplyDelivery", id: "s1", status: "completed" }, // names no patient
    ];
    const id = await createJob({ format: "fhir", records: lines });
    expect(await waitJob(id)).toMatchObject({ status: "awaiting_confirmation", logs_staged: 3, logs_invalid: 3 });
    const [pa, pb] = [(await patientByMrn(a))!, (await patientByMrn(b))!];
    const preview = (await inject("GET", `/v1/ingestion/jobs/${id}/preview`)).json();
    const invalid = Object.fromEntries(preview.patients.map((p: { patient_id: string; logs_invalid: number }) => [p.patient_id, p.logs_invalid]));
    expect(invalid).toEqual({ [pa]: 1, [pb]: 1 });
    expect((await inject("POST", `/v1/ingestion/jobs/${id}/cancel`, {})).statusCode).toBe(200);
  });

  it("takes a file of Bundles whose entries reference their Patient by urn:uuid, and cancels as a JSONL job does", async () => {
    const a = mrn();
    const b = mrn();
    const bundle = (value: string, n: number): Bundle => ({
      resourceType: "Bundle",
      type: "transaction",
      entry: [
        { fullUrl: `urn:uuid:0000000${n}-0000-4000-8000-000000000001`, resource: patient(`bp${n}`, value), request: { method: "POST", url: "Patient" } },
        { fullUrl: `urn:uuid:0000000${n}-0000-4000-8000-000000000002`, resource: condition(`bc${n}`, `urn:uuid:0000000${n}-0000-4000-8000-000000000001`, "44054006", "Type 2 diabetes mellitus") },
        { fullUrl: `urn:uuid:0000000${n}-0000-4000-8000-000000000003`, resource: condition(`bd${n}`, `urn:uuid:0000000${n}-0000-4000-8000-000000000001`, "38341003", "Hypertension", { code: {} }) },
      ],
    });
    const id = await createJob({ format: "fhir", records: [bundle(a, 1), bundle(b, 2)] });
    const waiting = await waitJob(id);
    expect(waiting, JSON.stringify(waiting.error_summary)).toMatchObject({ status: "awaiting_confirmation", lines_total: 2, patients_created: 2, logs_staged: 4, logs_by_event_type: { condition: 2, demographics: 2 } });
    expect(waiting.error_summary).toEqual([
      { line: 1, code: "fhir_unmappable", message: expect.stringMatching(/^Bundle\.entry\[2\]: Condition cannot be mapped: code/) },
      { line: 2, code: "fhir_unmappable", message: expect.stringMatching(/^Bundle\.entry\[2\]/) },
    ]);
    const r = await inject("POST", `/v1/ingestion/jobs/${id}/cancel`);
    expect(r.json()).toMatchObject({ status: "cancelled", logs_processed: 0 });
    const pid = (await patientByMrn(a))!;
    expect(pid).toMatch(/^pat_/);
    expect(await conditions(pid)).not.toContain("diabetes");
  });

  it("fails in VALIDATING when a resource names a Patient the file does not hold", async () => {
    const id = await createJob({ format: "fhir", records: [condition("x1", "Patient/nowhere", "44054006", "Type 2 diabetes mellitus")] });
    const failed = await waitJob(id);
    expect(failed).toMatchObject({ status: "failed", stage: "VALIDATING" });
    expect(failed.error_summary).toEqual([{ line: 1, code: "unknown_patient", message: expect.stringMatching(/Condition\/x1 subject references Patient\/nowhere/) }]);
  });
});
