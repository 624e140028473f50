import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../../support/stack.js";
import { def, expectSdkParses, opt, req, sdkClient, sdkOutcome, type SdkClient, type Shape } from "../../support/olira-sdk.js";

/**
 * The patient routes as the hosted product's Python SDK (olira 1.11) calls them
 * (olira-compat §3): its request bodies, and every field its models parse in the answers.
 */

let t: TestStack;
let sdk: SdkClient;
beforeAll(async () => {
  t = await startStack();
  sdk = sdkClient(t.app, t.adminKey);
});
afterAll(async () => {
  await t?.close();
});

const Identifier: Shape = { system: req("string"), value: req("string"), integration_id: opt("string") };
const Patient: Shape = {
  id: req("string"),
  timezone: req("string"),
  status: req("string"),
  first_name: opt("string"),
  last_name: opt("string"),
  sex: opt("string"),
  email: opt("string"),
  phone_number: opt("string"),
  date_of_birth: opt("string"),
  primary_disease_site: opt("string"),
  disease_stage: opt("string"),
  created_at: opt("string"),
  external_identifiers: def("list", { of: Identifier }),
  metadata: opt("object"),
};
const PatientList: Shape = { patients: req("list", { of: Patient }), total: req("int"), has_more: req("bool") };
const PatientBatch: Shape = {
  count: req("int"),
  items: req("list", { of: { index: req("int"), id: req("string"), source: opt("string") } }),
  errors: def("list", { of: { index: req("int"), code: req("string"), message: req("string") } }),
};
const IdentifierChange: Shape = {
  patient_id: req("string"),
  added: def("int"),
  removed: def("int"),
  skipped: def("int"),
  external_identifiers: def("list", { of: Identifier }),
};

type Id = { system: string; value: string; integration_id?: string };

/**
 * A create body as the SDK builds it: its fields in the model's order, the unset ones
 * (None) left out, while sex, timezone and external_identifiers always go, with their defaults.
 */
function createBody(f: {
  first_name?: string; last_name?: string; email?: string; phone_number?: string; date_of_birth?: string; sex?: string; timezone?: string;
  primary_disease_site?: string; disease_stage?: string; external_identifiers?: Id[]; metadata?: Record<string, unknown>;
}) {
  return {
    first_name: f.first_name, last_name: f.last_name, email: f.email, phone_number: f.phone_number, date_of_birth: f.date_of_birth,
    sex: f.sex ?? "unknown", timezone: f.timezone ?? "UTC", primary_disease_site: f.primary_disease_site, disease_stage: f.disease_stage,
    external_identifiers: f.external_identifiers ?? [], metadata: f.metadata,
  };
}

let seq = 0;
/** A value no other test uses. */
const uniq = (tag: string) => `${tag}-${process.pid}-${++seq}`;

async function create(f: Parameters<typeof createBody>[0]) {
  const r = await sdk.post("/v1/patients", createBody(f));
  expect(r.statusCode, r.body).toBe(201);
  expectSdkParses(r.json(), Patient);
  return r.json();
}

async function list(query: Record<string, string | number>) {
  const r = await sdk.get("/v1/patients", { limit: 100, offset: 0, ...query });
  expect(r.statusCode, r.body).toBe(200);
  expectSdkParses(r.json(), PatientList);
  return r.json<{ patients: { id: string }[]; total: number; has_more: boolean }>();
}
const idsOf = (l: { patients: { id: string }[] }) => l.patients.map((p) => p.id).sort();

describe("olira SDK: patients", () => {
  it("creates a patient from the SDK's body, storing the disease fields, and reads it back whole", async () => {
    const mrn = uniq("MRN");
    const body = createBody({
      first_name: "Ada", last_name: "Byron", email: "ada@example.org", date_of_birth: "1985-03-22T00:00:00Z",
      primary_disease_site: "lung", disease_stage: "IIIA", external_identifiers: [{ system: "epic", value: mrn }], metadata: { arm: "b" },
    });
    const r = await sdk.post("/v1/patients", body);
    expect(r.statusCode).toBe(201);
    const p = r.json();
    expectSdkParses(p, Patient);
    expect(p).toEqual({
      id: expect.stringMatching(/^pat_/), first_name: "Ada", last_name: "Byron", email: "ada@example.org", phone_number: null,
      date_of_birth: "1985-03-22T00:00:00Z", sex: "unknown", primary_disease_site: "lung", disease_stage: "IIIA", timezone: "UTC", status: "active",
      external_identifiers: [{ system: "epic", value: mrn }], metadata: { arm: "b" }, created_at: expect.any(String),
    });
    const got = await sdk.get(`/v1/patients/${p.id}`);
    expectSdkParses(got.json(), Patient);
    expect(got.json()).toEqual(p);
    // A shell patient (an identifier only): every optional string answers null, never missing a required field.
    const shell = await create({ external_identifiers: [{ system: "epic", value: uniq("SHELL") }] });
    expect(shell).toMatchObject({ first_name: null, email: null, date_of_birth: null, primary_disease_site: null, disease_stage: null, sex: "unknown", timezone: "UTC" });
  });

  it("lists with the SDK's paging and finds patients by system and value, system alone or integration id", async () => {
    const [epic, mrn] = [uniq("epic"), uniq("mrn")];
    const a = await create({ first_name: "A", external_identifiers: [{ system: epic, value: "1", integration_id: "itg-a" }, { system: mrn, value: "1" }] });
    const b = await create({ first_name: "B", external_identifiers: [{ system: epic, value: "2" }] });
    const c = await create({ first_name: "C", external_identifiers: [{ system: mrn, value: "3", integration_id: "itg-c" }] });
    const all = await list({});
    expect(all.total).toBe(all.patients.length);
    expect(all.has_more).toBe(false);
    const first = await list({ limit: 1 });
    expect(first).toMatchObject({ total: all.total, has_more: true });
    expect(first.patients).toHaveLength(1);
    const last = await list({ limit: 1, offset: all.total - 1 });
    expect(last.has_more).toBe(false);
    // The SDK's names and ours (system, value) are the same filters.
    for (const [s, v] of [["external_system", "external_value"], ["system", "value"]] as const) {
      expect(idsOf(await list({ [s]: epic, [v]: "1" }))).toEqual([a.id]);
      expect(idsOf(await list({ [s]: epic }))).toEqual([a.id, b.id].sort());
      expect(await list({ [s]: epic, [v]: "3" })).toEqual({ patients: [], total: 0, has_more: false });
    }
    expect(idsOf(await list({ integration_id: "itg-a" }))).toEqual([a.id]);
    expect(await list({ integration_id: "itg-none" })).toEqual({ patients: [], total: 0, has_more: false });
    // Filters hold on one identifier: c's integration is on its mrn identifier, not an epic one.
    expect(idsOf(await list({ external_system: mrn, integration_id: "itg-c" }))).toEqual([c.id]);
    expect((await list({ external_system: epic, integration_id: "itg-c" })).total).toBe(0);
    expect(idsOf(await list({ external_system: epic, external_value: "1", integration_id: "itg-a" }))).toEqual([a.id]);
    expect((await list({ external_system: mrn, external_value: "1", integration_id: "itg-a" })).total).toBe(0);
  });

  it("updates only the fields the SDK sends, the disease fields and date of birth included", async () => {
    const p = await create({ first_name: "Grace", primary_disease_site: "colon" });
    const r = await sdk.put(`/v1/patients/${p.id}`, { last_name: "Hopper", disease_stage: "IV", date_of_birth: "1906-12-09T00:00:00Z" });
    expect(r.statusCode).toBe(200);
    expectSdkParses(r.json(), Patient);
    expect(r.json()).toEqual({ ...p, last_name: "Hopper", disease_stage: "IV", date_of_birth: "1906-12-09T00:00:00Z" });
    expect((await sdk.get(`/v1/patients/${p.id}`)).json()).toEqual(r.json());
  });

  it("merges external identifiers on update: present pairs skipped as stored, new ones appended with their integration id", async () => {
    const [mine, other] = [uniq("MINE"), uniq("OTHER")];
    const p = await create({ first_name: "Merge", external_identifiers: [{ system: "epic", value: mine, integration_id: "itg-1" }] });
    const holder = await create({ external_identifiers: [{ system: "epic", value: other }] });
    const fresh = uniq("NEW");
    const r = await sdk.put(`/v1/patients/${p.id}`, {
      // A present pair naming another integration stays as stored: PUT never rewrites an identifier.
      external_identifiers: [{ system: "epic", value: mine, integration_id: "itg-2" }, { system: "flatiron", value: fresh, integration_id: "itg-9" }, { system: "fhir", value: fresh }],
    });
    expect(r.statusCode, r.body).toBe(200);
    expectSdkParses(r.json(), Patient);
    const merged = [{ system: "epic", value: mine, integration_id: "itg-1" }, { system: "flatiron", value: fresh, integration_id: "itg-9" }, { system: "fhir", value: fresh }];
    expect(r.json()).toEqual({ ...p, external_identifiers: merged });
    // Sending it all again changes nothing.
    expect((await sdk.put(`/v1/patients/${p.id}`, { external_identifiers: merged })).json()).toEqual(r.json());
    // The appended pairs are this patient's now.
    expect((await sdk.post("/v1/patients", createBody({ external_identifiers: [{ system: "fhir", value: fresh }] }))).statusCode).toBe(409);
    expect(idsOf(await list({ external_system: "flatiron", external_value: fresh }))).toEqual([p.id]);
    expect(idsOf(await list({ integration_id: "itg-9" }))).toEqual([p.id]);

    // Another patient's pair: 409 (the SDK's ServerError with status_code 409), nothing written.
    const taken = await sdk.put(`/v1/patients/${p.id}`, { first_name: "Changed", external_identifiers: [{ system: "dx", value: fresh }, { system: "epic", value: other }] });
    expect(taken.statusCode).toBe(409);
    expect(sdkOutcome(taken.statusCode)).toBe("conflict");
    expect(taken.json()).toMatchObject({ error_type: "conflict_error", message: expect.stringContaining(`epic|${other}`) });
    expect((await sdk.get(`/v1/patients/${p.id}`)).json()).toEqual(r.json());
    expect((await sdk.post("/v1/patients", createBody({ external_identifiers: [{ system: "dx", value: fresh }] }))).statusCode).toBe(201);
    expect(idsOf(await list({ external_system: "epic", external_value: other }))).toEqual([holder.id]);

    // An empty list would clear nothing here: a 422 that names the route that removes.
    const empty = await sdk.put(`/v1/patients/${p.id}`, { external_identifiers: [] });
    expect(empty.statusCode).toBe(422);
    expect(sdkOutcome(empty.statusCode)).toBe("validation");
    expect(empty.json()).toMatchObject({ error_type: "validation_error", message: expect.stringContaining("DELETE /v1/patients/{id}/external-identifiers"), details: [{ field: "external_identifiers" }] });
  });

  it("deletes softly or permanently as the SDK asks, freeing the patient's identifiers", async () => {
    const mrn = uniq("DEL");
    const soft = await create({ first_name: "Soft", external_identifiers: [{ system: "epic", value: mrn }] });
    const d = await sdk.delete(`/v1/patients/${soft.id}`);
    expect(sdkOutcome(d.statusCode)).toBe("ok");
    expect((await sdk.get(`/v1/patients/${soft.id}`)).statusCode).toBe(404);
    const heir = await create({ external_identifiers: [{ system: "epic", value: mrn }] });
    const erase = await sdk.delete(`/v1/patients/${heir.id}`, undefined, { permanent: true });
    expect(sdkOutcome(erase.statusCode)).toBe("ok");
    expect((await sdk.get(`/v1/patients/${heir.id}`)).statusCode).toBe(404);
    expect((await list({ external_system: "epic", external_value: mrn })).total).toBe(0);
  });

  it("creates patients in batch from the SDK's bodies, reporting each failure by index", async () => {
    const held = uniq("HELD");
    await create({ external_identifiers: [{ system: "epic", value: held }] });
    const r = await sdk.post("/v1/patients/batch", {
      patients: [
        createBody({ first_name: "One", primary_disease_site: "breast", disease_stage: "I" }),
        createBody({ first_name: "Two", timezone: "Mars/Olympus" }),
        createBody({ external_identifiers: [{ system: "epic", value: held }] }),
        createBody({ last_name: "Four" }),
      ],
    });
    expect(r.statusCode).toBe(200);
    const b = r.json();
    expectSdkParses(b, PatientBatch);
    expect(b.count).toBe(2);
    expect(b.items.map((i: { index: number }) => i.index)).toEqual([0, 3]);
    expect(b.errors.map((e: { index: number; code: string }) => [e.index, e.code])).toEqual([[1, "validation_error"], [2, "conflict"]]);
    const one = (await sdk.get(`/v1/patients/${b.items[0].id}`)).json();
    expectSdkParses(one, Patient);
    expect(one).toMatchObject({ first_name: "One", primary_disease_site: "breast", disease_stage: "I", sex: "unknown", timezone: "UTC" });
  });

  it("adds identifiers sent under `identifiers`, answering integer counts and the lists behind them", async () => {
    const [mine, other] = [uniq("ADD"), uniq("ADDX")];
    const p = await create({ external_identifiers: [{ system: "epic", value: mine }] });
    await create({ external_identifiers: [{ system: "epic", value: other }] });
    const path = `/v1/patients/${p.id}/external-identifiers`;
    const r = await sdk.post(path, { identifiers: [{ system: "epic", value: mine }, { system: "qurate", value: mine }] });
    expect(r.statusCode).toBe(200);
    expectSdkParses(r.json(), IdentifierChange);
    const after = [{ system: "epic", value: mine }, { system: "qurate", value: mine }];
    expect(r.json()).toEqual({
      patient_id: p.id, added: 1, removed: 0, skipped: 1,
      added_identifiers: [{ system: "qurate", value: mine }], removed_identifiers: [], skipped_identifiers: [{ system: "epic", value: mine }],
      external_identifiers: after,
    });
    expect((await sdk.get(`/v1/patients/${p.id}`)).json().external_identifiers).toEqual(after);
    // Our own name for the key still works.
    expect((await sdk.post(path, { external_identifiers: [{ system: "qurate", value: mine }] })).json()).toMatchObject({ added: 0, skipped: 1 });

    const taken = await sdk.post(path, { identifiers: [{ system: "epic", value: other }] });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().error_type).toBe("conflict_error");
    for (const bad of [{}, { identifiers: [] }, { identifiers: [{ system: "x", value: "1" }], external_identifiers: [{ system: "x", value: "1" }] }]) {
      const r422 = await sdk.post(path, bad);
      expect(r422.statusCode, JSON.stringify(bad)).toBe(422);
      expect(r422.json().error_type).toBe("validation_error");
    }
    expect((await sdk.get(`/v1/patients/${p.id}`)).json().external_identifiers).toEqual(after);
  });

  it("removes identifiers by matcher: a full pair, a system alone, an integration id", async () => {
    const v = uniq("RM");
    const p = await create({
      external_identifiers: [
        { system: "epic", value: `${v}-1`, integration_id: "itg-x" }, { system: "epic", value: `${v}-2` },
        { system: "mrn", value: `${v}-3`, integration_id: "itg-x" }, { system: "nhs", value: `${v}-4` },
      ],
    });
    const path = `/v1/patients/${p.id}/external-identifiers`;
    const remove = async (identifiers: unknown[]) => {
      const r = await sdk.delete(path, { identifiers });
      expect(r.statusCode, r.body).toBe(200);
      expectSdkParses(r.json(), IdentifierChange);
      return r.json();
    };
    expect(await remove([{ system: "nhs", value: `${v}-4` }])).toEqual({
      patient_id: p.id, added: 0, removed: 1, skipped: 0,
      added_identifiers: [], removed_identifiers: [{ system: "nhs", value: `${v}-4` }], skipped_identifiers: [],
      external_identifiers: p.external_identifiers.slice(0, 3),
    });
    const byIntegration = await remove([{ integration_id: "itg-x" }]);
    expect(byIntegration).toMatchObject({ removed: 2, skipped: 0, removed_identifiers: [p.external_identifiers[0], p.external_identifiers[2]], external_identifiers: [{ system: "epic", value: `${v}-2` }] });
    const bySystem = await remove([{ system: "epic" }, { system: "nowhere" }]);
    expect(bySystem).toMatchObject({ removed: 1, skipped: 1, skipped_identifiers: [{ system: "nowhere" }], external_identifiers: [] });
    // Nothing left to match: every matcher is skipped, and that is no error.
    expect(await remove([{ system: "epic", value: `${v}-2` }])).toMatchObject({ removed: 0, skipped: 1, external_identifiers: [] });
    // The removed identifiers are free for another patient.
    expect((await sdk.post("/v1/patients", createBody({ external_identifiers: [{ system: "mrn", value: `${v}-3` }] }))).statusCode).toBe(201);

    for (const bad of [[{ value: "x" }], [{}], [{ system: null, value: null }]]) {
      const r = await sdk.delete(path, { identifiers: bad });
      expect(r.statusCode, JSON.stringify(bad)).toBe(422);
      expect(r.json().details[0]).toMatchObject({ field: "identifiers.0" });
    }
  });

  it("stores the disease fields and integration ids of an ingestion file's patient rows", async () => {
    const mrn = uniq("JOB");
    const row = createBody({
      first_name: "Filed", primary_disease_site: "prostate", disease_stage: "II", external_identifiers: [{ system: "epic", value: mrn, integration_id: "itg-job" }],
    });
    const job = await sdk.post("/v1/ingestion/jobs", { records: [{ type: "patient", data: row }] });
    expect(job.statusCode, job.body).toBe(201);
    const end = Date.now() + 20_000;
    let found = await list({ external_system: "epic", external_value: mrn });
    while (found.total === 0 && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 50));
      found = await list({ external_system: "epic", external_value: mrn });
    }
    expect(found.patients[0]).toMatchObject({
      first_name: "Filed", primary_disease_site: "prostate", disease_stage: "II", sex: "unknown", timezone: "UTC",
      external_identifiers: [{ system: "epic", value: mrn, integration_id: "itg-job" }],
    });
    // The job waits for confirmation: cancelled there, it leaves the patients it created.
    const jobPath = `/v1/ingestion/jobs/${job.json().job_id}`;
    while ((await sdk.get(jobPath)).json().stage !== "AWAITING_CONFIRMATION" && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    expect(sdkOutcome((await sdk.post(`${jobPath}/cancel`)).statusCode)).toBe("ok");
    expect((await list({ external_system: "epic", external_value: mrn })).patients).toEqual(found.patients);
  });
});
