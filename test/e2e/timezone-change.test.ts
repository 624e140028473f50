import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "10" });
});
afterAll(async () => {
  await t?.close();
});

const days = async (pid: string): Promise<string[]> => {
  const r = await t.app.inject({ method: "GET", url: `/v1/state/${pid}/event-modules/physical_activity`, headers: t.auth });
  expect(r.statusCode).toBe(200);
  return r.json().payload.days.map((d: { date: string }) => d.date);
};

describe("the patient record in the compiled state", () => {
  it("compiles the state again in the new zone: days move to the new zone's dates, old logs included", async () => {
    const pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: { timezone: "UTC" } })).json().id;
    const activity = (at: string) => ({ log_type: "activity_data", patient_id: pid, timestamp: at, payload: { steps: 1000, period: { start_datetime: at, end_datetime: at } } });
    const sent = await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: [activity("2026-03-02T03:00:00Z")] } });
    expect(sent.json().accepted).toBe(1);
    expect(await days(pid)).toEqual(["2026-03-02"]);

    const put = await t.app.inject({ method: "PUT", url: `/v1/patients/${pid}`, headers: t.auth, payload: { timezone: "America/New_York" } });
    expect(put.statusCode).toBe(200);
    // The read right after the change already sees the state compiled in New York time.
    expect(await days(pid)).toEqual(["2026-03-01"]);
    await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: [activity("2026-03-03T04:00:00Z")] } });
    expect(await days(pid)).toEqual(["2026-03-01", "2026-03-02"]);
  });

  it("counts the record's date of birth as on file in the profile view, and follows a change of it", async () => {
    const essentials = async (pid: string): Promise<string> => {
      const r = await t.app.inject({ method: "GET", url: `/v1/state/${pid}/views/profile_snapshot/blocks/missing_essentials`, headers: t.auth });
      expect(r.statusCode).toBe(200);
      return r.json().content as string;
    };
    const allergy = (pid: string) => ({ logs: [{ log_type: "allergy_intolerance", patient_id: pid, timestamp: "2026-03-01T09:00:00Z", payload: { allergies: [{ allergen: "penicillin", category: "medication" }] } }] });
    const known = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: { date_of_birth: "1950-02-03" } })).json().id;
    const unknown = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
    for (const pid of [known, unknown]) expect((await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: allergy(pid) })).json().accepted).toBe(1);
    expect(await essentials(known)).not.toMatch(/date of birth/i);
    expect(await essentials(unknown)).toMatch(/date of birth/i);
    expect((await t.app.inject({ method: "PUT", url: `/v1/patients/${unknown}`, headers: t.auth, payload: { date_of_birth: "1961-07-04" } })).statusCode).toBe(200);
    expect(await essentials(unknown)).not.toMatch(/date of birth/i);
  });
});
