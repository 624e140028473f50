import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundle, Observation } from "@medplum/fhirtypes";
import { startStack, type TestStack } from "../support/stack.js";

/** A result sent again through POST /v1/fhir/resource (corrected, amended) as FHIR out then shows it. */
let t: TestStack;

const UCUM = "http://unitsofmeasure.org";
const LOINC = "http://loinc.org";
const category = (code: string) => [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/observation-category", code }] }];
const qty = (value: number, code: string) => ({ value, unit: code, system: UCUM, code });
const interpretation = (code: string) => [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation", code }] }];
const AT = "2026-11-20T08:00:00-05:00";

const lab = (id: string, status: string, value: number, extra: Record<string, unknown> = {}) => ({
  resourceType: "Observation", id, status, category: category("laboratory"),
  code: { coding: [{ system: LOINC, code: "718-7", display: "Hemoglobin [Mass/volume] in Blood" }] },
  effectiveDateTime: AT, valueQuantity: qty(value, "g/dL"), referenceRange: [{ low: qty(12, "g/dL"), high: qty(16, "g/dL") }], ...extra,
});const weight = (status: string, lb: number) => ({
  resourceType: "Observation", id: "w1", status, category: category("vital-signs"),
  code: { coding: [{ system: LOINC, code: "29463-7", display: "Body weight" }] }, effectiveDateTime: AT, valueQuantity: qty(lb, "[lb_av]"),
});

const post = (url: string, payload: unknown) => t.app.inject({ method: "POST", url, headers: t.auth, payload: payload as object });
const newPatient = async () => (await post("/v1/patients", { first_name: "Grace" })).json().id as string;
async function send(pid: string, resource: unknown): Promise<void> {
  const r = (await post("/v1/fhir/resource", { patient_id: pid, resource })).json();
  expect(r, JSON.stringify(r.errors)).toMatchObject({ accepted: 1, failed: 0 });
}
async function observations(pid: string, query = ""): Promise<Observation[]> {
  const r = await t.app.inject({ method: "GET", url: `/v1/state/${pid}/fhir/Observation${query}`, headers: t.auth });
  expect(r.statusCode).toBe(200);
  return (r.json<Bundle>().entry ?? []).map((e) => e.resource as Observation);
}
async function summaryObservations(pid: string): Promise<Observation[]> {
  const r = await t.app.inject({ method: "GET", url: `/v1/state/${pid}/fhir/summary`, headers: t.auth });
  return (r.json<Bundle>().entry ?? []).map((e) => e.resource!).filter((x): x is Observation => x.resourceType === "Observation");
}
const shown = (obs: Observation[]) => obs.map((o) => [o.effectiveDateTime, o.valueQuantity?.value, o.status, o.interpretation?.[0]?.coding?.[0]?.code]);

beforeAll(async () => {
  t = await startStack({});
});

afterAll(async () => {
  await t?.close();
});

describe("FHIR out after a result is sent again for the same draw", () => {
  it("shows a corrected lab value in place of the final one, in the searchset and the summary", async () => {
    const pid = await newPatient();
    await send(pid, lab("hgb-1", "final", 13.2));
    await send(pid, lab("hgb-1", "corrected", 10.1, { interpretation: interpretation("L") }));
    const expected = [["2026-11-20T13:00:00.000Z", 10.1, "corrected", "L"]];
    expect(shown(await observations(pid, "?code=718-7"))).toEqual(expected);
    expect(shown(await summaryObservations(pid))).toEqual(expected);
  });

  it("never shows a preliminary value as final: an amended one replaces it, as corrected", async () => {
    const pid = await newPatient();
    await send(pid, lab("hgb-2", "preliminary", 5.5));
    expect(shown(await observations(pid))).toEqual([["2026-11-20T13:00:00.000Z", 5.5, "preliminary", "L"]]);
    await send(pid, lab("hgb-2", "amended", 6.1));
    expect(shown(await observations(pid))).toEqual([["2026-11-20T13:00:00.000Z", 6.1, "corrected", "L"]]);
  });

  it("shows a corrected weight in place of the one measured at the same time, in the state and FHIR out", async () => {
    const pid = await newPatient();
    await send(pid, weight("final", 185));
    await send(pid, weight("corrected", 158));
    expect(shown(await observations(pid, "?code=29463-7"))).toEqual([["2026-11-20T13:00:00.000Z", 71.67, "corrected", undefined]]);
    const vitals = (await t.app.inject({ method: "GET", url: `/v1/state/${pid}/event-modules/vitals`, headers: t.auth })).json();
    expect(vitals.payload.history.map((h: { measurements: unknown }) => h.measurements)).toEqual([{ weight_kg: 71.67 }]);
    expect(vitals.payload.latest.weight_kg.value).toBe(71.67);
  });
});

describe("FHIR in: a lab reference range in another unit than the value's", () => {
  it("is not applied: a normal glucose in mg/dL with a range in mmol/L is not flagged high, in the state or FHIR out", async () => {
    const pid = await newPatient();
    await send(pid, {
      resourceType: "Observation", id: "glu-1", status: "final", category: category("laboratory"),
      code: { coding: [{ system: LOINC, code: "2345-7" }] }, effectiveDateTime: AT, valueQuantity: qty(100, "mg/dL"),
      referenceRange: [{ low: { value: 3.9, code: "mmol/L" }, high: { value: 5.6, code: "mmol/L" } }],
    });
    const [glucose] = await observations(pid, "?code=2345-7");
    expect(glucose).toMatchObject({ valueQuantity: { value: 100, unit: "mg/dL" } });
    expect(glucose?.interpretation).toBeUndefined();
    expect(glucose?.referenceRange).toBeUndefined();
    const labs = (await t.app.inject({ method: "GET", url: `/v1/state/${pid}/event-modules/lab_results`, headers: t.auth })).json();
    expect(labs.payload.results[0]).toMatchObject({ reference_range_low: null, reference_range_high: null, latest: { abnormal_flag: null } });
  });
});

describe("FHIR in: a lab result or vital entered in error", () => {
  it("is refused with what to do instead, and the value sent before stays until a corrected one replaces it", async () => {
    const pid = await newPatient();
    await send(pid, lab("hgb-3", "final", 13.2));
    const r = (await post("/v1/fhir/resource", { patient_id: pid, resource: lab("hgb-3", "entered-in-error", 13.2) })).json();
    expect(r).toMatchObject({ accepted: 0, failed: 1 });
    expect(r.errors[0].message).toMatch(/entered-in-error, which the patient's logs cannot record: nothing was stored or removed\. To fix a wrong value, send the right result for the same test and effective time with status corrected/);
    expect(shown(await observations(pid))).toEqual([["2026-11-20T13:00:00.000Z", 13.2, "final", "N"]]);
  });
});
