import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TimeoutError } from "@nats-io/nats-core";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
beforeAll(async () => {
  t = await startStack();
});
afterAll(async () => {
  await t?.close();
});

const post = (url: string, payload: unknown) => t.app.inject({ method: "POST", url, headers: t.auth, payload: payload as object });
const get = (url: string) => t.app.inject({ method: "GET", url, headers: t.auth });

describe("patients", () => {
  it("creates a patient with the contract's shape and defaults the timezone to UTC", async () => {
    const r = await post("/v1/patients", {
      first_name: "Ada",
      last_name: "Lovelace",
      email: "ada@example.org",
      date_of_birth: "1815-12-10",
      external_identifiers: [{ system: "mrn", value: "A-1" }],
      metadata: { cohort: "pilot" },
    });
    expect(r.statusCode).toBe(201);
    const p = r.json();
    expect(Object.keys(p).sort()).toEqual(
      [
        "id", "first_name", "last_name", "email", "phone_number", "date_of_birth", "sex", "primary_disease_site", "disease_stage",
        "timezone", "status", "external_identifiers", "metadata", "created_at",
      ].sort(),
    );
    expect(p).toMatchObject({
      id: expect.stringMatching(/^pat_/), timezone: "UTC", status: "active", phone_number: null, primary_disease_site: null, disease_stage: null, metadata: { cohort: "pilot" },
    });
    expect((await get(`/v1/patients/${p.id}`)).json()).toEqual(p);
  });

  it("reads null as not known on create for every field, the zone, metadata and identifiers included", async () => {
    const r = await post("/v1/patients", { first_name: "Nulls", timezone: null, metadata: null, external_identifiers: null, sex: null });
    expect(r.statusCode, r.body).toBe(201);
    expect(r.json()).toMatchObject({ timezone: "UTC", metadata: {}, external_identifiers: [], sex: null });
  });

  it("rejects an unknown timezone with 422 naming the field", async () => {
    const r = await post("/v1/patients", { timezone: "Mars/Olympus" });
    expect(r.statusCode).toBe(422);
    expect(r.json().details[0]).toMatchObject({ field: "timezone", location: ["body", "timezone"], input_value: "Mars/Olympus" });
  });

  it("stores a zone in the case the time zone database spells it, and keeps links as sent", async () => {
    expect((await post("/v1/patients", { timezone: "utc" })).json().timezone).toBe("UTC");
    expect((await post("/v1/patients", { timezone: "europe/paris" })).json().timezone).toBe("Europe/Paris");
    expect((await post("/v1/patients", { timezone: "Asia/Kolkata" })).json().timezone).toBe("Asia/Kolkata");
    const p = (await post("/v1/patients", {})).json();
    const r = await t.app.inject({ method: "PUT", url: `/v1/patients/${p.id}`, headers: t.auth, payload: { timezone: "america/new_york" } });
    expect(r.json().timezone).toBe("America/New_York");
  });

  it("rejects a schema-invalid body with 422 and located details", async () => {
    const r = await post("/v1/patients", { first_name: 42, external_identifiers: [{ system: "mrn" }] });
    expect(r.statusCode).toBe(422);
    const fields = r.json().details.map((d: any) => d.field);
    expect(fields).toContain("first_name");
    expect(fields).toContain("external_identifiers.0.value");
  });

  it("answers 409 when an external identifier already belongs to another patient", async () => {
    await post("/v1/patients", { external_identifiers: [{ system: "mrn", value: "DUP-1" }] });
    const r = await post("/v1/patients", { external_identifiers: [{ system: "mrn", value: "DUP-1" }] });
    expect(r.statusCode).toBe(409);
    expect(r.json()).toMatchObject({ error_type: "conflict_error" });
  });

  it("gives one patient and one 409 per extra attempt when the same identifier is created concurrently", async () => {
    const rs = await Promise.all(Array.from({ length: 6 }, () => post("/v1/patients", { external_identifiers: [{ system: "mrn", value: "RACE-1" }] })));
    const codes = rs.map((r) => r.statusCode).sort();
    expect(codes).toEqual([201, 409, 409, 409, 409, 409]);
    const found = (await get("/v1/patients?system=mrn&value=RACE-1")).json();
    expect(found.total).toBe(1);
  });

  it("updates only the fields sent", async () => {
    const p = (await post("/v1/patients", { first_name: "Grace", last_name: "Hopper" })).json();
    const r = await t.app.inject({ method: "PUT", url: `/v1/patients/${p.id}`, headers: t.auth, payload: { last_name: "Murray", timezone: "America/New_York" } });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ first_name: "Grace", last_name: "Murray", timezone: "America/New_York" });
  });

  it("keeps read-only fields out of PUT: unchanged ones pass, changed ones are 422 and nothing is written", async () => {
    const x = (await post("/v1/patients", { external_identifiers: [{ system: "mrn", value: "RO-X" }] })).json();
    const y = (await post("/v1/patients", { first_name: "Yves", external_identifiers: [{ system: "mrn", value: "RO-Y" }] })).json();
    const put = (payload: object) => t.app.inject({ method: "PUT", url: `/v1/patients/${y.id}`, headers: t.auth, payload });
    // Identifiers on PUT only add: another patient's is a 409, and nothing else of the body is written.
    const taken = await put({ external_identifiers: [{ system: "mrn", value: "RO-X" }], first_name: "Changed" });
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toMatchObject({ error_type: "conflict_error", details: [{ field: "external_identifiers", input_value: { system: "mrn", value: "RO-X" } }] });
    for (const change of [
      { status: "archived" },
      { created_at: "1970-01-01T00:00:00Z" },
      { id: x.id },
    ]) {
      const r = await put({ ...change, first_name: "Changed" });
      expect(r.statusCode, JSON.stringify(change)).toBe(422);
      expect(r.json().details[0].field).toBe(Object.keys(change)[0]);
    }
    expect((await get(`/v1/patients/${y.id}`)).json()).toEqual(y);
    expect((await get("/v1/patients?system=mrn&value=RO-X")).json().patients.map((p: { id: string }) => p.id)).toEqual([x.id]);
    // Identifiers sent back in another order, keys swapped, are the same identifiers: nothing to add.
    const twoIds = (await post("/v1/patients", { external_identifiers: [{ system: "mrn", value: "RO-Z1" }, { system: "nhs", value: "RO-Z2" }] })).json();
    const reordered = await t.app.inject({ method: "PUT", url: `/v1/patients/${twoIds.id}`, headers: t.auth, payload: {
      external_identifiers: [{ value: "RO-Z2", system: "nhs" }, { value: "RO-Z1", system: "mrn" }], last_name: "Z",
    } });
    expect(reordered.statusCode).toBe(200);
    expect(reordered.json().external_identifiers).toEqual(twoIds.external_identifiers);
    // What a GET gave may go back whole; unknown fields are ignored, as on create.
    const back = await put({ ...y, first_name: "Yvonne", unknown_field: 1 });
    expect(back.statusCode).toBe(200);
    expect(back.json()).toEqual({ ...y, first_name: "Yvonne" });
  });

  it("refuses dates of birth that are no calendar date, and metadata too large for the record", async () => {
    for (const date_of_birth of ["1990-02-30", "1990-13-99Tgarbage", "1990-01-01Tnoon"]) {
      const r = await post("/v1/patients", { date_of_birth });
      expect(r.statusCode, date_of_birth).toBe(422);
      expect(r.json().details[0]).toMatchObject({ field: "date_of_birth", input_value: date_of_birth });
    }
    expect((await post("/v1/patients", { date_of_birth: "1990-01-01T08:30:00Z" })).statusCode).toBe(201);
    // Any year of four digits: years 0-99 are no shorthand for 1900-1999.
    expect((await post("/v1/patients", { date_of_birth: "0001-01-01" })).json().date_of_birth).toBe("0001-01-01");
    const big = await post("/v1/patients", { metadata: { p: "x".repeat(1_100_000) } });
    expect(big.statusCode).toBe(422);
    expect(big.json().details[0].field).toBe("metadata");
    // null means not known, as answers spell it.
    const nulls = await post("/v1/patients", { first_name: "N", email: null, sex: null, date_of_birth: null });
    expect(nulls.statusCode).toBe(201);
    expect(nulls.json()).toMatchObject({ first_name: "N", email: null, sex: null, date_of_birth: null });
    const future = await post("/v1/patients", { date_of_birth: "2999-01-01" });
    expect(future.statusCode).toBe(422);
    expect(future.json().details[0]).toMatchObject({ field: "date_of_birth", message: expect.stringContaining("future") });
    // Metadata past its 32 levels is located; nesting that would overflow JSON.stringify's
    // recursion is refused for the whole body before parsing: a 422 either way, not a 500.
    const deep = (levels: number) => `{"metadata":${'{"a":'.repeat(levels)}1${"}".repeat(levels)}}`;
    const json = { ...t.auth, "content-type": "application/json" };
    const nested = await t.app.inject({ method: "POST", url: "/v1/patients", headers: json, payload: deep(100) });
    expect(nested.statusCode).toBe(422);
    expect(nested.json().details[0]).toMatchObject({ field: "metadata", message: expect.stringContaining("deeper than 32") });
    const overflowing = await t.app.inject({ method: "POST", url: "/v1/patients", headers: json, payload: deep(6_000) });
    expect(overflowing.statusCode).toBe(422);
    expect(overflowing.json().details[0]).toMatchObject({ type: "too_deep", location: ["body"] });
    const batch = (await post("/v1/patients/batch", { patients: [{ date_of_birth: "2001-02-29" }, {}] })).json();
    expect(batch.count).toBe(1);
    expect(batch.errors[0]).toMatchObject({ index: 0, code: "validation_error" });
  });

  it("lists patients with total and has_more, and finds one by system and value", async () => {
    const page = (await get("/v1/patients?limit=2&offset=0")).json();
    expect(page.patients).toHaveLength(2);
    expect(page.total).toBeGreaterThanOrEqual(4);
    expect(page.has_more).toBe(true);
    const byId = (await get("/v1/patients?system=mrn&value=A-1")).json();
    expect(byId.patients.map((p: any) => p.first_name)).toEqual(["Ada"]);
    const byValue = (await get("/v1/patients?value=A-1")).json();
    expect(byValue.total).toBe(1);
    // The hosted product's SDKs name them external_system / external_value.
    const aliased = (await get("/v1/patients?external_system=mrn&external_value=A-1")).json();
    expect(aliased.patients.map((p: any) => p.first_name)).toEqual(["Ada"]);
  });

  it("creates patients in batch, reporting each failure by index", async () => {
    const r = await post("/v1/patients/batch", {
      patients: [{ first_name: "B1" }, { timezone: "Nowhere/Zone" }, { external_identifiers: [{ system: "mrn", value: "A-1" }] }, { first_name: 7 }],
    });
    expect(r.statusCode).toBe(200);
    const b = r.json();
    expect(b.count).toBe(1);
    expect(b.items).toEqual([{ index: 0, id: expect.stringMatching(/^pat_/) }]);
    expect(b.errors.map((e: any) => [e.index, e.code])).toEqual([
      [1, "validation_error"],
      [2, "conflict"],
      [3, "validation_error"],
    ]);
    // Said in the catalog's words, at the field: not the validator's "Expected union value".
    expect(b.errors[2].message).toMatch(/^patients\[3\]\.first_name: must be (a )?string or null$/);
  });

  it("reports a patient storage did not take as that patient's storage_error, keeping the others created; 503 only when none was", async () => {
    const patients = t.services.patients;
    const create = patients.create.bind(patients);
    // KV not answering for the patients named "Lost" (as a NATS time-out mid-batch would).
    patients.create = async (p) => {
      if (p.first_name === "Lost") throw new TimeoutError();
      return create(p);
    };
    try {
      const some = await post("/v1/patients/batch", { patients: [{ first_name: "Kept" }, { first_name: "Lost" }, { first_name: "Kept" }] });
      expect(some.statusCode).toBe(200);
      expect(some.json().items.map((i: { index: number }) => i.index)).toEqual([0, 2]);
      expect(some.json().errors).toEqual([{ index: 1, code: "storage_error", message: expect.stringContaining("send it again") }]);
      const none = await post("/v1/patients/batch", { patients: [{ first_name: "Lost" }] });
      expect(none.statusCode).toBe(503);
    } finally {
      patients.create = create;
    }
  });

  it("adds and removes external identifiers, skipping what needs no change", async () => {
    const p = (await post("/v1/patients", { external_identifiers: [{ system: "mrn", value: "E-1" }] })).json();
    const add = await post(`/v1/patients/${p.id}/external-identifiers`, {
      external_identifiers: [{ system: "mrn", value: "E-1" }, { system: "nhs", value: "943" }],
    });
    expect(add.json()).toMatchObject({
      patient_id: p.id, added: 1, removed: 0, skipped: 1,
      added_identifiers: [{ system: "nhs", value: "943" }], removed_identifiers: [], skipped_identifiers: [{ system: "mrn", value: "E-1" }],
    });
    const del = await t.app.inject({
      method: "DELETE",
      url: `/v1/patients/${p.id}/external-identifiers`,
      headers: t.auth,
      payload: { external_identifiers: [{ system: "mrn", value: "E-1" }, { system: "x", value: "y" }] },
    });
    expect(del.json()).toMatchObject({
      added: 0, removed: 1, skipped: 1,
      removed_identifiers: [{ system: "mrn", value: "E-1" }], skipped_identifiers: [{ system: "x", value: "y" }], external_identifiers: [{ system: "nhs", value: "943" }],
    });
    // The released identifier is free for another patient.
    expect((await post("/v1/patients", { external_identifiers: [{ system: "mrn", value: "E-1" }] })).statusCode).toBe(201);
  });

  it("soft-deletes a patient: later reads answer 404", async () => {
    const p = (await post("/v1/patients", { first_name: "Gone" })).json();
    const d = await t.app.inject({ method: "DELETE", url: `/v1/patients/${p.id}`, headers: t.auth });
    expect(d.json()).toEqual({ id: p.id, status: "deleted", permanent: false });
    expect((await get(`/v1/patients/${p.id}`)).statusCode).toBe(404);
  });

  it("erases a patient's logs on permanent delete", async () => {
    const p = (await post("/v1/patients", { first_name: "Erase" })).json();
    const logs = [{ log_type: "user_login", patient_id: p.id, timestamp: "2026-01-01T00:00:00Z", payload: {} }];
    expect((await post("/v1/logs/batch", { logs })).json().accepted).toBe(1);
    const { jsm, names } = t.services.topology;
    const subject = names.logSubject("org_default", "prj_default", p.id);
    const before = await jsm.streams.info(names.logsStream, { subjects_filter: subject });
    expect(before.state.subjects?.[subject]).toBe(1);
    const traced = { filter: [{ field: "trace", op: "eq", value: `erase-${p.id}` }], count: true };
    expect((await post("/v1/logs/batch", { logs: [{ ...logs[0], trace: `erase-${p.id}` }] })).json().accepted).toBe(1);
    expect((await post("/v1/state/logs/query", traced)).json()).toEqual({ count: 1 });
    await t.app.inject({ method: "DELETE", url: `/v1/patients/${p.id}?permanent=true`, headers: t.auth });
    const after = await jsm.streams.info(names.logsStream, { subjects_filter: subject });
    expect(after.state.subjects?.[subject]).toBeUndefined();
    expect((await get(`/v1/patients/${p.id}`)).statusCode).toBe(404);
    // Gone from the log query too, for the organization and as a cohort.
    expect((await post("/v1/state/logs/query", traced)).json()).toEqual({ count: 0 });
    expect((await post("/v1/state/logs/query", { patient_ids: [p.id], count: true })).json()).toEqual({ count: 0 });
  });

  it("erases a soft-deleted patient on permanent delete, leaving its old identifier to whoever holds it now", async () => {
    const p = (await post("/v1/patients", { external_identifiers: [{ system: "mrn", value: "SOFT-1" }] })).json();
    const logs = [{ log_type: "user_login", patient_id: p.id, timestamp: "2026-01-01T00:00:00Z", payload: {}, trace: `soft-${p.id}` }];
    expect((await post("/v1/logs/batch", { logs })).json().accepted).toBe(1);
    await t.app.inject({ method: "DELETE", url: `/v1/patients/${p.id}`, headers: t.auth });
    const heir = (await post("/v1/patients", { external_identifiers: [{ system: "mrn", value: "SOFT-1" }] })).json();
    const erase = await t.app.inject({ method: "DELETE", url: `/v1/patients/${p.id}?permanent=true`, headers: t.auth });
    expect(erase.json()).toEqual({ id: p.id, status: "deleted", permanent: true });
    expect((await post("/v1/state/logs/query", { patient_ids: [p.id], count: true })).json()).toEqual({ count: 0 });
    expect((await get("/v1/patients?system=mrn&value=SOFT-1")).json().patients.map((x: { id: string }) => x.id)).toEqual([heir.id]);
    expect((await post("/v1/patients", { external_identifiers: [{ system: "mrn", value: "SOFT-1" }] })).statusCode).toBe(409);
    expect((await t.app.inject({ method: "DELETE", url: `/v1/patients/${p.id}?permanent=true`, headers: t.auth })).statusCode).toBe(404);
    // A release that comes late (it raced the heir's claim) leaves the heir's claim alone.
    await t.services.patients.releaseIdentifiers("prj_default", [{ system: "mrn", value: "SOFT-1" }], p.id);
    expect((await post("/v1/patients", { external_identifiers: [{ system: "mrn", value: "SOFT-1" }] })).statusCode).toBe(409);
  });
});
