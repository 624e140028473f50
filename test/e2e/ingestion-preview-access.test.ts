import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";

/**
 * The job preview shows stored patient state (names, each touched module before the
 * confirm): a key that may only upload files must not read it through the preview.
 */

let t: TestStack;
const MARK = `zq${randomBytes(6).toString("hex")}`;
const MRN = `MRN-${MARK}`;
let pid: string;
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

async function createKey(scopes: string[]): Promise<string> {
  const r = await t.app.inject({ method: "POST", url: "/v1/api-keys", headers: t.auth, payload: { name: `preview ${MARK}`, scopes } });
  expect(r.statusCode, r.body).toBe(201);
  return r.json().key as string;
}

const vitals = (patient_id: string, ts: string, weight_kg: number) => ({
  event_type: "vitals_measurement",
  patient_id,
  timestamp: ts,
  payload: { measurements: { weight_kg, heart_rate_bpm: 70 }, context: {}, source: `clinic${MARK}`, collection_datetime: ts },
});

async function awaitingJob(key: string): Promise<string> {
  const created = await t.app.inject({
    method: "POST",
    url: "/v1/ingestion/jobs",
    headers: bearer(key),
    payload: { require_confirmation: true, records: [{ type: "log", data: vitals(MRN, "2026-03-02T08:00:00Z", 80.5) }] },
  });
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json().job_id as string;
  const end = Date.now() + 20_000;
  for (;;) {
    const j = (await t.app.inject({ method: "GET", url: `/v1/ingestion/jobs/${id}`, headers: bearer(key) })).json();
    if (j.status === "awaiting_confirmation") return id;
    if (Date.now() > end) throw new Error(`job ${id} stuck in ${j.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  t = await startStack();
  const p = await t.app.inject({
    method: "POST",
    url: "/v1/patients",
    headers: t.auth,
    payload: { first_name: `Ada${MARK}`, last_name: "Byron", external_identifiers: [{ system: "mrn", value: MRN }] },
  });
  pid = p.json().id;
  const { event_type: log_type, ...stored } = vitals(pid, "2026-03-01T08:00:00Z", 71.5);
  expect((await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: [{ log_type, ...stored }] } })).json().accepted).toBe(1);
});
afterAll(async () => {
  await t?.close();
});

describe("the ingestion job preview", () => {
  it("refuses a key holding sdk:historical-ingest alone with 403 missing_scope naming sdk:state-read, showing nothing of the patient", async () => {
    const key = await createKey(["sdk:historical-ingest"]);
    const id = await awaitingJob(key);
    const r = await t.app.inject({ method: "GET", url: `/v1/ingestion/jobs/${id}/preview`, headers: bearer(key) });
    expect(r.statusCode, r.body).toBe(403);
    expect(r.json()).toMatchObject({ error: true, error_type: "authorization_error", details: [{ type: "missing_scope", required_scope: "sdk:state-read" }] });
    expect(r.body).not.toContain(MARK);
    expect(r.body).not.toContain(pid);
    // The rest of the job's routes keep working with that key alone.
    expect((await t.app.inject({ method: "POST", url: `/v1/ingestion/jobs/${id}/cancel`, headers: bearer(key) })).statusCode).toBe(200);
  });

  it("answers a key holding sdk:state-read too, and audits every patient it shows", async () => {
    const key = await createKey(["sdk:historical-ingest", "sdk:state-read"]);
    const id = await awaitingJob(key);
    const r = await t.app.inject({ method: "GET", url: `/v1/ingestion/jobs/${id}/preview`, headers: bearer(key) });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().patients).toEqual([expect.objectContaining({ patient_id: pid, logs_staged: 1 })]);
    const audit = await t.app.inject({ method: "GET", url: `/v1/audit?limit=1000&patient_id=${pid}`, headers: t.auth });
    const previews = (audit.json().entries as { route: string; status: number; patient_ids: string[] }[]).filter((e) => e.route === "/v1/ingestion/jobs/:id/preview");
    expect(previews).toEqual([expect.objectContaining({ status: 200, patient_id: pid, patient_ids: [pid] })]);
    expect((await t.app.inject({ method: "POST", url: `/v1/ingestion/jobs/${id}/cancel`, headers: bearer(key) })).statusCode).toBe(200);
  });
});
