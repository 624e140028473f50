import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundle, Condition } from "@medplum/fhirtypes";
import { startStack, type TestStack } from "../support/stack.js";

/** FHIR in (issue 29): POST /v1/fhir/resource as the hosted SDK's log_fhir sends it, and POST /v1/fhir with Bundles. */
let t: TestStack;
let pid: string;

const CLINICAL = "http://terminology.hl7.org/CodeSystem/condition-clinical";
const condition = (id: string, snomed: string, text: string, extra: Partial<Condition> = {}): Condition => ({
  resourceType: "Condition",
  id,
  clinicalStatus: { coding: [{ system: CLINICAL, code: "active" }] },
  code: { coding: [{ system: "http://snomed.info/sct", code: snomed, display: text }], text },
  subject: { reference: "Patient/ehr-1" },
  onsetDateTime: "2025-06-01",
  recordedDate: "2025-06-03T09:00:00Z",
  ...extra,
});

/** A heart rate the catalog refuses (below 0): valid FHIR, mapped, but no vitals_measurement log can hold it. */
const badHeartRate = (id: string, extra: Record<string, unknown> = {}) => ({
  resourceType: "Observation", id, status: "final",
  category: [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/observation-category", code: "vital-signs" }] }],
  code: { coding: [{ system: "http://loinc.org", code: "8867-4", display: "Heart rate" }] },
  effectiveDateTime: "2025-06-01T08:00:00Z", valueQuantity: { value: -5, unit: "/min", system: "http://unitsofmeasure.org", code: "/min" },
  ...extra,
});

const post = (url: string, payload: unknown) => t.app.inject({ method: "POST", url, headers: t.auth, payload: payload as object });
const conditions = async (who: string) =>
  (await t.app.inject({ method: "GET", url: `/v1/state/${who}/stable`, headers: t.auth })).json().modules.condition_diagnosis;

beforeAll(async () => {
  t = await startStack({});
  pid = (await post("/v1/patients", { first_name: "Ada" })).json().id;
});

afterAll(async () => {
  await t?.close();
});

describe("POST /v1/fhir/resource", () => {
  it("stores a Condition as a condition log the stable state shows, keeping its source", async () => {
    const r = await post("/v1/fhir/resource", { patient_id: pid, resource: condition("c-1", "44054006", "Type 2 diabetes mellitus"), idempotency_key: "ehr-c-1" });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ accepted: 1, failed: 0, duplicates: 0, errors: [], results: [{ index: 0, status: "accepted" }] });
    expect(JSON.stringify(await conditions(pid))).toContain("Type 2 diabetes mellitus");
    const logs = (await t.app.inject({ method: "GET", url: `/v1/state/${pid}/logs?include_metadata=true`, headers: t.auth })).json();
    const stored = logs.logs.find((l: any) => l.id === r.json().results[0].id);
    expect(stored).toMatchObject({ type: "condition", trace: { object_type: "Condition", object_id: "c-1" }, metadata: { fhir_reference: "Condition/c-1" } });
    expect(stored.metadata.fhir_resource.code.coding[0].code).toBe("44054006");
  });

  it("answers a retry with the same key as accepted (the SDK raises on 0) and stores nothing twice", async () => {
    const body = { patient_id: pid, resource: condition("c-1", "44054006", "Type 2 diabetes mellitus"), idempotency_key: "ehr-c-1" };
    const again = (await post("/v1/fhir/resource", body)).json();
    expect(again).toMatchObject({ accepted: 1, duplicates: 1, results: [{ status: "duplicate" }] });
    // Without a key, the same content is the same logs.
    const unkeyed = { patient_id: pid, resource: condition("c-2", "38341003", "Hypertension") };
    const first = (await post("/v1/fhir/resource", unkeyed)).json();
    const second = (await post("/v1/fhir/resource", unkeyed)).json();
    expect(second.results[0]).toEqual({ index: 0, id: first.results[0].id, status: "duplicate" });
  });

  it("keeps a resource's keys apart from batch logs' keys: a batch log keyed K:0 neither hides the resource nor is hidden by it", async () => {
    const memory = (key: string) => ({ log_type: "memory_report", patient_id: pid, timestamp: "2026-03-01T10:00:00Z", payload: { content: "unrelated" }, idempotency_key: key });
    const batch = (key: string) => t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: [memory(key)] } });
    expect((await batch("ehr-k-1:0")).json().accepted).toBe(1);
    const r = (await post("/v1/fhir/resource", { patient_id: pid, resource: condition("c-k", "37796009", "Migraine"), idempotency_key: "ehr-k-1" })).json();
    expect(r).toMatchObject({ accepted: 1, duplicates: 0, results: [{ status: "accepted" }] });
    expect(JSON.stringify(await conditions(pid))).toContain("Migraine");
    // The other way round: the resource's key first, then a batch log keyed like its log.
    expect((await post("/v1/fhir/resource", { patient_id: pid, resource: condition("c-k2", "49436004", "Atrial fibrillation"), idempotency_key: "ehr-k-2" })).json().duplicates).toBe(0);
    expect((await batch("ehr-k-2:0")).json()).toMatchObject({ accepted: 1, duplicates: 0 });
  });

  it("answers 422 without a resourceType", async () => {
    const r = await post("/v1/fhir/resource", { patient_id: pid, resource: { id: "x" } });
    expect(r.statusCode).toBe(422);
    expect(r.json().details[0].location).toEqual(["body", "resource", "resourceType"]);
  });

  it("refuses an unmapped type and invalid FHIR in the answer, located, storing nothing", async () => {
    const unmapped = (await post("/v1/fhir/resource", { patient_id: pid, resource: { resourceType: "SupplyDelivery", id: "s1", status: "completed" } })).json();
    expect(unmapped).toMatchObject({ accepted: 0, failed: 1, errors: [{ index: 0, code: "fhir_unmappable" }] });
    expect(unmapped.errors[0].message).toMatch(/SupplyDelivery is not mapped.*Condition/);
    const invalid = (await post("/v1/fhir/resource", { patient_id: pid, resource: condition("c-3", "195967001", "Asthma", { onsetDateTime: "2025-02-30x" }) })).json();
    expect(invalid).toMatchObject({ accepted: 0, failed: 1, errors: [{ code: "fhir_invalid", details: [{ location: ["body", "resource", "onsetDateTime"], input_value: "2025-02-30x" }] }] });
    expect(JSON.stringify(await conditions(pid))).not.toContain("Asthma");
  });

  it("refuses a resource whose derived log the catalog refuses as the resource's error, at the resource, storing nothing", async () => {
    const r = (await post("/v1/fhir/resource", { patient_id: pid, resource: badHeartRate("o-neg") })).json();
    const message = "maps to a vitals_measurement log the catalog refuses: resource.payload.measurements.heart_rate_bpm must be at least 0";
    expect(r).toMatchObject({ accepted: 0, failed: 1, errors: [{ index: 0, code: "fhir_unmappable", message: `Observation ${message}`, details: [{ location: ["body", "resource"], message }] }] });
    const logs = (await t.app.inject({ method: "GET", url: `/v1/state/${pid}/logs?log_types=vitals_measurement`, headers: t.auth })).json();
    expect(logs.logs).toHaveLength(0);
  });

  it("locates an unknown patient at body.patient_id, where the request names it", async () => {
    const r = (await post("/v1/fhir/resource", { patient_id: "pat_nobody000", resource: condition("c-5", "195967001", "Asthma") })).json();
    expect(r).toMatchObject({ accepted: 0, failed: 1, errors: [{ code: "patient_not_found" }] });
    expect(r.errors[0].details[0]).toMatchObject({ field: "patient_id", location: ["body", "patient_id"], input_value: "pat_nobody000" });
  });

  it("echoes, for a missing required element, the object that lacks it", async () => {
    const { status: _s, ...noStatus } = badHeartRate("o-nostatus");
    const r = (await post("/v1/fhir/resource", { patient_id: pid, resource: noStatus })).json();
    expect(r.errors[0]).toMatchObject({ code: "fhir_invalid", details: [{ location: ["body", "resource", "status"], input_value: noStatus }] });
  });

  it("refuses a clinical status outside the R4 codes, located at the code, rather than storing the condition as active", async () => {
    const bogus = condition("c-6", "195967001", "Bogus asthma", { clinicalStatus: { coding: [{ system: CLINICAL, code: "bogus" }] } });
    const r = (await post("/v1/fhir/resource", { patient_id: pid, resource: bogus })).json();
    expect(r).toMatchObject({ accepted: 0, failed: 1, errors: [{ code: "fhir_unmappable", details: [{ location: ["body", "resource", "clinicalStatus", "coding", 0, "code"], input_value: "bogus" }] }] });
    expect(r.errors[0].message).toMatch(/active, recurrence, relapse, inactive, remission, resolved/);
    expect(JSON.stringify(await conditions(pid))).not.toContain("Bogus asthma");
  });

  it("keeps a newer Condition version over an older one sent after it, and reads a resolution only from its abatement on", async () => {
    const p3 = (await post("/v1/patients", { first_name: "Cleo" })).json().id;
    const held = async (query = "") => {
      const r = await t.app.inject({ method: "GET", url: `/v1/state/${p3}/stable?modules=condition_diagnosis${query}`, headers: t.auth });
      return r.json().modules.condition_diagnosis.payload.conditions.map((c: any) => [c.disease_type, c.status]);
    };
    const version = (id: string, text: string, lastUpdated: string, status: string, extra: Partial<Condition> = {}) =>
      condition(id, "195967001", text, { meta: { lastUpdated }, clinicalStatus: { coding: [{ system: CLINICAL, code: status }] }, onsetDateTime: "2024-05-01", recordedDate: "2024-05-02", ...extra });
    const send = async (c: Condition) => expect((await post("/v1/fhir/resource", { patient_id: p3, resource: c })).json().accepted).toBe(1);
    await send(version("asthma-v2", "Asthma", "2026-11-01T00:00:00Z", "resolved", { abatementDateTime: "2026-10-15" }));
    await send(version("asthma-v1", "Asthma", "2024-05-02T00:00:00Z", "active"));
    expect(await held()).toEqual([["Asthma", "resolved"]]);

    await send(version("ecz-v1", "Eczema", "2025-01-10T00:00:00Z", "active", { code: { text: "Eczema" } }));
    await send(version("ecz-v2", "Eczema", "2026-11-02T00:00:00Z", "resolved", { code: { text: "Eczema" }, abatementDateTime: "2026-11-01" }));
    expect(await held("&as_of=2026-06-01T00:00:00Z")).toContainEqual(["Eczema", "active"]);
    expect(await held()).toContainEqual(["Eczema", "resolved"]);
  });

  it("takes application/fhir+json", async () => {
    const r = await t.app.inject({
      method: "POST", url: "/v1/fhir/resource", headers: { ...t.auth, "content-type": "application/fhir+json" },
      payload: JSON.stringify({ patient_id: pid, resource: condition("c-4", "13645005", "COPD") }),
    });
    expect(r.json().accepted).toBe(1);
  });
});

describe("POST /v1/fhir", () => {
  const bundle = (type: string, mrn: string, entries: unknown[]): Bundle => ({
    resourceType: "Bundle",
    type: type as Bundle["type"],
    entry: [
      { fullUrl: "urn:uuid:0b7c3f1e-0000-4000-8000-000000000001", resource: { resourceType: "Patient", id: "ehr-1", identifier: [{ system: "urn:oid:1.2.36.146.595.217.0.1", value: mrn }], name: [{ family: "Chalmers", given: ["Peter"] }], birthDate: "1974-12-25", gender: "male" } },
      ...(entries as Bundle["entry"] & object),
    ],
  });
  const ref = { reference: "urn:uuid:0b7c3f1e-0000-4000-8000-000000000001" };

  it("creates the Bundle's patient when allowed, resolves urn:uuid references, and answers a batch-response", async () => {
    const b = bundle("batch", "MRN-100", [
      { fullUrl: "urn:uuid:c1", resource: condition("b-c1", "73211009", "Diabetes mellitus", { subject: ref }) },
      { fullUrl: "urn:uuid:c2", resource: condition("b-c2", "49436004", "Atrial fibrillation", { subject: ref }) },
      { resource: { resourceType: "SupplyDelivery", id: "s", status: "completed", patient: ref } },
    ]);
    const refused = await post("/v1/fhir", b);
    expect(refused.json().entry[1].response.status).toBe("404 Not Found");
    expect(refused.json().entry[1].response.outcome.issue[0].details.text).toMatch(/create_patients=true/);

    const r = await post("/v1/fhir?create_patients=true", b);
    expect(r.statusCode).toBe(200);
    expect(r.headers["content-type"]).toMatch(/application\/fhir\+json/);
    const answer = r.json();
    expect(answer).toMatchObject({ resourceType: "Bundle", type: "batch-response" });
    expect(answer.entry.map((e: any) => e.response.status).slice(1)).toEqual(["201 Created", "201 Created", "422 Unprocessable Entity"]);
    expect(answer.entry[3].response.outcome.issue[0].expression).toEqual(["Bundle.entry[3].resource.resourceType"]);
    const found = (await t.app.inject({ method: "GET", url: "/v1/patients?system=urn:oid:1.2.36.146.595.217.0.1&value=MRN-100", headers: t.auth })).json();
    expect(found.patients).toHaveLength(1);
    const who = found.patients[0].id;
    expect(found.patients[0]).toMatchObject({ first_name: "Peter", last_name: "Chalmers", date_of_birth: "1974-12-25" });
    const held = JSON.stringify(await conditions(who));
    expect(held).toContain("Diabetes mellitus");
    expect(held).toContain("Atrial fibrillation");

    // The same Bundle again: the patient is found, nothing is stored twice.
    const again = (await post("/v1/fhir?create_patients=true", b)).json();
    expect(again.entry.map((e: any) => e.response.status).slice(1, 3)).toEqual(["200 OK", "200 OK"]);
    const logs = (await t.app.inject({ method: "GET", url: `/v1/state/${who}/logs?log_types=condition`, headers: t.auth })).json();
    expect(logs.logs).toHaveLength(2);

    // The audit trail names the patient the Bundle wrote for, though the request did not.
    let audited: any[] = [];
    for (const until = Date.now() + 5_000; audited.length < 2 && Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
      audited = (await t.app.inject({ method: "GET", url: `/v1/audit?patient_id=${who}`, headers: t.auth })).json().entries.filter((e: any) => e.route === "/v1/fhir");
    }
    expect(audited.map((e) => e.status)).toEqual([200, 200]);
  });

  it("refuses a Patient whose identifiers belong to two patients (409 ambiguous_patient), and every entry for it, writing to neither", async () => {
    const SYS = "urn:oid:1.2.36.146.595.217.0.1";
    const holder = async (value: string) => (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: { first_name: value, external_identifiers: [{ system: SYS, value }] } })).json().id;
    const [one, two] = [await holder("MRN-A1"), await holder("MRN-A2")];
    const both = (type: string): Bundle => ({ resourceType: "Bundle", type: type as Bundle["type"], entry: [
      { fullUrl: ref.reference, resource: { resourceType: "Patient", identifier: [{ system: SYS, value: "MRN-A1" }, { system: SYS, value: "MRN-A2" }], name: [{ family: "Ambiguous" }] } },
      { resource: condition("amb-c1", "38341003", "Ambiguous hypertension", { subject: ref }) },
    ] });
    const r = (await post("/v1/fhir?create_patients=true", both("batch"))).json();
    expect(r.entry.map((e: any) => e.response.status)).toEqual(["409 Conflict", "409 Conflict"]);
    expect(r.entry[0].response.outcome.issue[0]).toMatchObject({ code: "conflict", diagnostics: "ambiguous_patient", details: { text: expect.stringContaining(`MRN-A1 is ${one}'s`) } });
    expect(r.entry[1].response.outcome.issue[0].details.text).toMatch(/^its patient \(entry 0\): /);
    const transaction = await post("/v1/fhir?create_patients=true", both("transaction"));
    expect(transaction.statusCode).toBe(422);
    for (const who of [one, two]) {
      expect(String(JSON.stringify(await conditions(who)))).not.toContain("Ambiguous hypertension");
      expect((await t.app.inject({ method: "GET", url: `/v1/patients/${who}`, headers: t.auth })).json().external_identifiers).toHaveLength(1);
    }
  });

  it("answers a batch entry whose clinical status is outside the R4 codes 422, at the code", async () => {
    const b: Bundle = { resourceType: "Bundle", type: "batch", entry: [
      { resource: condition("bb-1", "195967001", "Batch asthma", { subject: { reference: `Patient/${pid}` }, clinicalStatus: { coding: [{ system: CLINICAL, code: "bogus" }] } }) },
    ] };
    const r = (await post("/v1/fhir", b)).json();
    expect(r.entry[0].response).toMatchObject({ status: "422 Unprocessable Entity", outcome: { issue: [{ expression: ["Bundle.entry[0].resource.clinicalStatus.coding[0].code"] }] } });
    expect(JSON.stringify(await conditions(pid))).not.toContain("Batch asthma");
  });

  it("tells a single resource sent to POST /v1/fhir where it goes, at resourceType", async () => {
    const r = await post("/v1/fhir", condition("lost-1", "73211009", "Diabetes mellitus"));
    expect(r.statusCode).toBe(422);
    expect(r.json().details).toEqual([expect.objectContaining({ location: ["body", "resourceType"], input_value: "Condition" })]);
    expect(r.json().message).toBe('request validation failed: resourceType must be "Bundle": POST /v1/fhir takes a batch, transaction or collection Bundle; send one Condition to POST /v1/fhir/resource with its patient_id, or wrap it in a Bundle');
    // A Bundle of another type is told the types taken, as before.
    expect((await post("/v1/fhir", { resourceType: "Bundle", type: "searchset" })).json().details[0].location).toEqual(["body", "type"]);
  });

  it("refuses a transaction whole when one entry cannot be stored", async () => {
    const b = bundle("transaction", "MRN-200", [
      { fullUrl: "urn:uuid:t1", resource: condition("t-c1", "35489007", "Depressive disorder", { subject: ref }) },
      { fullUrl: "urn:uuid:t2", resource: condition("t-c2", "35489007", "Bad date", { subject: ref, recordedDate: "yesterday" }) },
    ]);
    const r = await post("/v1/fhir?create_patients=true", b);
    expect(r.statusCode).toBe(422);
    expect(r.json().details).toContainEqual(expect.objectContaining({ location: ["body", "entry", 2, "resource", "recordedDate"], input_value: "yesterday" }));
    const none = (await t.app.inject({ method: "GET", url: "/v1/patients?system=urn:oid:1.2.36.146.595.217.0.1&value=MRN-200", headers: t.auth })).json();
    expect(none.patients).toHaveLength(0);
  });

  it("refuses a transaction whole when an entry's derived log is one the catalog refuses, creating no patient", async () => {
    const b = bundle("transaction", "MRN-300", [
      { fullUrl: "urn:uuid:t3", resource: condition("t-c3", "35489007", "Depressive disorder", { subject: ref }) },
      { fullUrl: "urn:uuid:t4", resource: badHeartRate("t-o1", { subject: ref }) },
    ]);
    const r = await post("/v1/fhir?create_patients=true", b);
    expect(r.statusCode).toBe(422);
    expect(r.json().details).toContainEqual(expect.objectContaining({ location: ["body", "entry", 2, "resource"], type: "fhir_unmappable", message: expect.stringMatching(/^Observation maps to a vitals_measurement log the catalog refuses: /) }));
    const none = (await t.app.inject({ method: "GET", url: "/v1/patients?system=urn:oid:1.2.36.146.595.217.0.1&value=MRN-300", headers: t.auth })).json();
    expect(none.patients).toHaveLength(0);
  });

  it("routes entries without a patient reference to patient_id, and Patient/<id> to that patient", async () => {
    const { subject: _s, ...noSubject } = condition("p-c1", "230690007", "Stroke");
    const b: Bundle = { resourceType: "Bundle", type: "collection", entry: [
      { resource: noSubject as Condition },
      { resource: condition("p-c2", "22298006", "Myocardial infarction", { subject: { reference: `Patient/${pid}` } }) },
    ] };
    const r = (await post(`/v1/fhir?patient_id=${pid}`, b)).json();
    expect(r.entry.map((e: any) => e.response.status)).toEqual(["201 Created", "201 Created"]);
    const held = JSON.stringify(await conditions(pid));
    expect(held).toContain("Stroke");
    expect(held).toContain("Myocardial infarction");
    const orphan = (await post("/v1/fhir", { ...b, entry: [b.entry![0]] })).json();
    expect(orphan.entry[0].response).toMatchObject({ status: "404 Not Found" });
  });
});
