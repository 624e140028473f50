import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { generateSecret } from "../../src/control/api-keys.js";
import type { Scope } from "../../src/auth/scopes.js";
import { baseUrl, callTool, connectMcp } from "../support/mcp-client.js";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
let base: string;
/** Named on the record, with an identifier whose value another patient holds in another system. */
let jose: string;
/** No name on the record: the demographics log names her. */
let anaDemo: string;
let anaRecord: string;
let joanna: string;
let admin: Client;
/** A patient token of jose. */
let token: Client;
const clients: Client[] = [];

const call = (name: string, args: Record<string, unknown> = {}, c = admin) => callTool(c, name, args);
const ids = (r: { json: { candidates: { patient_id: string }[] } }) => r.json.candidates.map((c) => c.patient_id);
const rest = async (body: unknown) => {
  const r = await t.app.inject({ method: "POST", url: "/v1/state/logs/query", headers: t.auth, payload: body as object });
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
};

async function client(credential: string): Promise<Client> {
  const c = await connectMcp(base, credential);
  clients.push(c);
  return c;
}

/** An org-wide key holding every scope MCP callers use but `without`. */
async function keyWithout(without: Scope): Promise<string> {
  const secret = generateSecret();
  const scopes = (["mcp:patient-state", "sdk:state-read", "api:manage-patients"] as const).filter((s) => s !== without);
  await t.services.apiKeys.create({ organization_id: "org_default", project_id: null, name: `no ${without}`, scopes: [...scopes] }, secret);
  return secret;
}

const symptom = (patient_id: string, timestamp: string, name: string, score: number) =>
  ({ log_type: "symptom_report", patient_id, timestamp, payload: { instrument: "esas_r", symptoms: [{ name, score }] } });
const SYMPTOM_REPORTS = { field: "payload.instrument", op: "eq", value: "esas_r" };

beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "10" });
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  base = baseUrl(t.app);
  const mk = async (body: object) => (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: body })).json().id as string;
  jose = await mk({ first_name: "José", last_name: "O'Brien-Núñez", date_of_birth: "1980-05-02", external_identifiers: [{ system: "mrn", value: "MRN-1" }] });
  anaDemo = await mk({ external_identifiers: [{ system: "mrn", value: "MRN-2" }, { system: "nhs", value: "MRN-1" }] });
  anaRecord = await mk({ first_name: "Ana", last_name: "Garcia", date_of_birth: "1990-01-01" });
  joanna = await mk({ first_name: "Joanna", last_name: "Smith", date_of_birth: "1975-11-30" });
  const logs = [
    { log_type: "demographics", patient_id: anaDemo, timestamp: "2026-07-01T00:00:00Z", payload: { name: "Ana María García", dob: "1975-11-30" } },
    symptom(jose, "2026-07-01T08:00:00Z", "pain", 8),
    symptom(jose, "2026-07-02T08:00:00Z", "pain", 6),
    symptom(jose, "2026-07-02T09:00:00Z", "nausea", 3),
    symptom(anaDemo, "2026-07-01T10:00:00Z", "pain", 4),
    symptom(anaRecord, "2026-07-03T10:00:00Z", "tiredness", 5),
  ];
  const r = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } })).json();
  expect(r.accepted, JSON.stringify(r.errors)).toBe(logs.length);
  // A state read waits for the demographics log to be applied (find_patient reads the state as stored).
  expect((await t.app.inject({ method: "GET", url: `/v1/state/${anaDemo}/stable`, headers: t.auth })).json().modules.demographics.payload.name).toBe("Ana María García");
  admin = await client(t.adminKey);
  const minted = await t.app.inject({ method: "POST", url: "/v1/auth/token", headers: t.auth, payload: { patient_id: jose } });
  token = await client(minted.json().access_token);
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await t?.close();
});

describe("find_patient", () => {
  it("finds by external identifier: a pair exactly, a value in any system, a system", async () => {
    const pair = await call("find_patient", { identifier_system: "mrn", identifier_value: "MRN-1" });
    expect(pair.json).toMatchObject({ count: 1, next_cursor: null });
    expect(pair.json.candidates[0]).toEqual({
      patient_id: jose, first_name: "José", last_name: "O'Brien-Núñez", demographics_name: null, date_of_birth: "1980-05-02", sex: null,
      identifiers: [{ system: "mrn", value: "MRN-1" }], created_at: expect.any(String),
    });
    expect(ids(await call("find_patient", { identifier_value: "MRN-1" }))).toEqual([jose, anaDemo]);
    expect(ids(await call("find_patient", { identifier_system: "nhs" }))).toEqual([anaDemo]);
    expect(ids(await call("find_patient", { identifier_system: "mrn", identifier_value: "mrn-1" }))).toEqual([]);
  });

  it("finds by part of a name, ignoring case, accents and punctuation, from the record or the demographics", async () => {
    expect(ids(await call("find_patient", { name: "ana garc" }))).toEqual([anaDemo, anaRecord]);
    expect(ids(await call("find_patient", { name: "GARCÍA" }))).toEqual([anaDemo, anaRecord]);
    // Words begin words of the name: "ana" is not found inside Joanna.
    expect(ids(await call("find_patient", { name: "ana" }))).toEqual([anaDemo, anaRecord]);
    expect(ids(await call("find_patient", { name: "maria" }))).toEqual([anaDemo]);
    for (const name of ["jose obrien", "O'BRIEN nunez", "núñez-o'brien jo"]) expect(ids(await call("find_patient", { name })), name).toEqual([jose]);
    const demo = (await call("find_patient", { name: "ana maria" })).json.candidates[0];
    expect(demo).toMatchObject({ patient_id: anaDemo, first_name: null, demographics_name: "Ana María García", date_of_birth: "1975-11-30" });
  });

  it("finds by date of birth on the record or in the demographics, and with a name narrows to one", async () => {
    expect(ids(await call("find_patient", { date_of_birth: "1975-11-30" }))).toEqual([anaDemo, joanna]);
    expect(ids(await call("find_patient", { date_of_birth: "1975-11-30", name: "ana" }))).toEqual([anaDemo]);
    expect(ids(await call("find_patient", { date_of_birth: "1980-05-02" }))).toEqual([jose]);
  });

  it("answers no match as an empty list, and pages with a cursor", async () => {
    expect((await call("find_patient", { name: "Zebedee" })).json).toEqual({ count: 0, candidates: [], next_cursor: null });
    expect(ids(await call("find_patient", { name: "ana", date_of_birth: "1990-01-02" }))).toEqual([]);
    const p1 = await call("find_patient", { date_of_birth: "1975-11-30", limit: 1 });
    expect(p1.json).toMatchObject({ count: 1, next_cursor: anaDemo });
    const p2 = await call("find_patient", { date_of_birth: "1975-11-30", limit: 1, cursor: p1.json.next_cursor });
    expect(p2.json).toMatchObject({ count: 1, next_cursor: null });
    expect(ids(p2)).toEqual([joanna]);
  });

  it("refuses a search without criteria, a bad date and a stray patient_id as tool errors", async () => {
    expect(await call("find_patient", {})).toMatchObject({ isError: true, text: expect.stringContaining("at least one of name") });
    expect(await call("find_patient", { name: "--" })).toMatchObject({ isError: true, text: expect.stringContaining("letter or digit") });
    expect(await call("find_patient", { date_of_birth: "1980-02-30" })).toMatchObject({ isError: true, text: expect.stringContaining("real calendar date") });
    expect(await call("find_patient", { date_of_birth: "02/05/1980" })).toMatchObject({ isError: true, text: expect.stringContaining("YYYY-MM-DD") });
    expect(await call("find_patient", { name: "ana", patient_id: jose })).toMatchObject({ isError: true, text: expect.stringContaining("patient_id") });
  });

  it("is not offered to a patient token, and a call by name is a tool error saying why", async () => {
    const names = (await token.listTools()).tools.map((x) => x.name);
    expect(names).not.toContain("find_patient");
    expect(names).toContain("query_logs");
    const r = await call("find_patient", { name: "ana" }, token);
    expect(r).toMatchObject({ isError: true, text: expect.stringContaining("not available to a patient token") });
    expect(r.text).not.toContain(anaDemo);
  });

  it("needs api:manage-patients, as GET /v1/patients", async () => {
    const c = await client(await keyWithout("api:manage-patients"));
    const r = await call("find_patient", { name: "ana" }, c);
    expect(r).toMatchObject({ isError: true, text: expect.stringContaining("api:manage-patients") });
    expect(r.text).not.toContain(anaDemo);
  });
});

describe("query_logs", () => {
  const bodies = {
    count: { count: true, filter: [SYMPTOM_REPORTS] },
    perSymptom: {
      filter: [SYMPTOM_REPORTS],
      group_by: ["payload.symptoms.0.name"],
      aggregations: [
        { op: "count", alias: "n" },
        { op: "avg", field: "payload.symptoms.0.score", alias: "avg_score" },
        { op: "min", field: "payload.symptoms.0.score", alias: "lowest" },
        { op: "max", field: "payload.symptoms.0.score", alias: "highest" },
      ],
      order: [{ field: "n", desc: true }],
    },
    rows: { filter: [SYMPTOM_REPORTS, { field: "timestamp", op: "gte", value: "2026-07-02" }], limit: 2, include_total: true },
  };

  it("answers what the REST query route answers for the same body, and where the next page starts", async () => {
    for (const [what, body] of Object.entries(bodies)) {
      const r = await call("query_logs", body);
      expect(r.isError, `${what}: ${r.text}`).toBe(false);
      const { next_offset, ...answer } = r.json;
      expect(answer, what).toEqual(await rest(body));
      if (what === "rows") expect(next_offset).toBe(2);
    }
    expect((await call("query_logs", bodies.count)).json).toEqual({ count: 5 });
    const groups = (await call("query_logs", bodies.perSymptom)).json.rows;
    expect(groups[0]).toEqual({ "payload.symptoms.0.name": "pain", n: 3, avg_score: 6, lowest: 4, highest: 8 });
    expect(groups.map((g: { n: number }) => g.n)).toEqual([3, 1, 1]);
    const rows = (await call("query_logs", bodies.rows)).json;
    expect(rows).toMatchObject({ count: 2, total_count: 3, has_more: true, next_offset: 2 });
    const rest3 = await call("query_logs", { ...bodies.rows, offset: 2 });
    expect(rest3.json).toMatchObject({ count: 1, has_more: false, next_offset: null });
  });

  it("queries only a patient token's own patient, and refuses naming another", async () => {
    const own = { ...bodies.count, patient_ids: [jose] };
    expect((await call("query_logs", bodies.count, token)).json).toEqual(await rest(own));
    expect((await call("query_logs", bodies.count, token)).json).toEqual({ count: 3 });
    const groups = (await call("query_logs", bodies.perSymptom, token)).json.rows.map((g: Record<string, unknown>) => g["payload.symptoms.0.name"]);
    expect(groups.sort()).toEqual(["nausea", "pain"]);
    const rows = (await call("query_logs", { filter: [SYMPTOM_REPORTS] }, token)).json;
    expect(rows).toMatchObject({ count: 3, patient_id: jose });
    const other = await call("query_logs", { ...bodies.count, patient_ids: [anaDemo] }, token);
    expect(other).toMatchObject({ isError: true, text: expect.stringContaining("not found") });
    expect(other.text).toContain("leave patient_ids out");
  });

  it("answers a patient token whose patient was deleted with a tool error saying so", async () => {
    const gone = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
    const minted = await t.app.inject({ method: "POST", url: "/v1/auth/token", headers: t.auth, payload: { patient_id: gone } });
    const its = await client(minted.json().access_token);
    expect((await call("query_logs", bodies.count, its)).json).toEqual({ count: 0 });
    expect((await t.app.inject({ method: "DELETE", url: `/v1/patients/${gone}`, headers: t.auth })).statusCode).toBe(200);
    const r = await call("query_logs", bodies.count, its);
    expect(r).toMatchObject({ isError: true, text: expect.stringContaining("the patient this credential is bound to has been deleted") });
  });

  it("cuts a page over 20 kB short, and next_offset continues after it without losing a row", async () => {
    const symptoms = Array.from({ length: 30 }, (_, k) => ({ name: `symptom ${k} ${"x".repeat(150)}`, score: 1, scale_min: 0, scale_max: 10 }));
    const bulky = Array.from({ length: 6 }, (_, i) => ({ log_type: "symptom_report", patient_id: anaRecord, timestamp: `2026-06-0${i + 1}T08:00:00Z`, payload: { instrument: "bulk", symptoms } }));
    const sent = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: bulky } })).json();
    expect(sent.accepted, JSON.stringify(sent.errors)).toBe(6);
    const body = { filter: [{ field: "payload.instrument", op: "eq", value: "bulk" }], limit: 6 };
    const all = (await rest(body)).rows.map((r: { id: string }) => r.id);
    expect(all).toHaveLength(6);
    const seen: string[] = [];
    let offset: number | null = 0;
    for (let page = 0; offset !== null && page < 6; page++) {
      const r = await call("query_logs", { ...body, offset });
      expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(20_000);
      if (page === 0) expect(r.json).toMatchObject({ truncated: true, has_more: true });
      seen.push(...r.json.rows.map((x: { id: string }) => x.id));
      offset = r.json.next_offset;
    }
    expect(seen).toEqual(all);
  });

  it("needs sdk:state-read, as the REST route", async () => {
    const c = await client(await keyWithout("sdk:state-read"));
    const r = await call("query_logs", bodies.count, c);
    expect(r).toMatchObject({ isError: true, text: expect.stringContaining("sdk:state-read") });
    expect(r.text).not.toContain("count");
  });

  it("answers a body the query builder refuses as a tool error naming what is wrong", async () => {
    const field = await call("query_logs", { filter: [{ field: "payload.a-b", op: "eq", value: 1 }] });
    expect(field).toMatchObject({ isError: true, text: expect.stringContaining("payload.a-b") });
    expect(await call("query_logs", { filter: [{ field: "type", op: "near", value: 1 }] })).toMatchObject({ isError: true, text: expect.stringContaining("filter.0.op") });
    expect((await call("query_logs", { limit: 5000 })).isError).toBe(true);
    // patient_ids narrows a query; a patient_id is refused rather than dropped (which would widen it).
    expect(await call("query_logs", { ...bodies.count, patient_id: jose })).toMatchObject({ isError: true, text: expect.stringContaining("patient_id") });
  });
});
