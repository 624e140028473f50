import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";

// A stack of its own (a short confirmation time-out), so a file of its own: one embedded
// ClickHouse per process.
const patientRow = (value: string) => ({ type: "patient", data: { first_name: "Ada", external_identifiers: [{ system: "mrn", value }] } });
const mrn = () => `MRN-${process.pid}-${Date.now()}`;

describe("ingestion jobs left unconfirmed", () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startStack({ PSS_JOB_CONFIRM_TIMEOUT_MS: "300" });
  });
  afterAll(async () => {
    await s?.close();
  });

  it("are cancelled automatically after the confirmation time-out", async () => {
    const r = await s.app.inject({ method: "POST", url: "/v1/ingestion/jobs", headers: s.auth, payload: { records: [patientRow(mrn())] } });
    const id = r.json().job_id;
    const end = Date.now() + 10_000;
    let j;
    do {
      j = (await s.app.inject({ method: "GET", url: `/v1/ingestion/jobs/${id}`, headers: s.auth })).json();
      await new Promise((x) => setTimeout(x, 50));
    } while (j.status !== "cancelled" && Date.now() < end);
    expect(j).toMatchObject({ status: "cancelled", stage: "AWAITING_CONFIRMATION" });
    expect(j.status_message).toMatch(/not confirmed within/);
  });
});
