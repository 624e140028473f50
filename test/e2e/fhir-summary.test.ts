import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundle, Composition, Observation, Provenance, Resource } from "@medplum/fhirtypes";
import { PatientStateClient } from "../../client/index.js";
import { validateFhir } from "../../fhir/validate.js";
import { logIdsOf } from "../../fhir/outbound/index.js";
import { baseUrl } from "../support/mcp-client.js";
import { startStack, type TestStack } from "../support/stack.js";

/**
 * FHIR out (issue 29): a patient filled through POST /v1/logs/batch with one of each
 * clinical kind, read back as the patient summary document and as searchsets.
 */
let t: TestStack;
let pid: string;
const ids = new Map<string, string>();
const sent: Record<string, unknown>[] = [];

/** Before it: the January logs; after it, February's (a second HbA1c, a weight, a new drug). */
const CUT = "2026-02-01T00:00:00Z";

beforeAll(async () => {
  t = await startStack();
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  const created = await t.app.inject({
    method: "POST", url: "/v1/patients", headers: t.auth,
    payload: { first_name: "Ada", last_name: "Lovelace", external_identifiers: [{ system: "urn:oid:1.2.36.146.595.217.0.1", value: "MRN-7731" }] },
  });
  expect(created.statusCode).toBe(201);
  pid = created.json().id;
  const L = (name: string, log_type: string, timestamp: string, payload: Record<string, unknown>) => {
    sent.push(payload);
    return { name, log: { log_type, patient_id: pid, timestamp, payload } };
  };
  const logs = [
    L("demo", "demographics", "2026-01-02T09:00:00Z", {
      name: "Ada King Lovelace", dob: "1979-12-10", sex: "female", marital_status: "married", language: "en-GB",
      address: { street: "12 St James's Square", city: "London", state: "Greater London", zip: "SW1Y 4JH", country: "GB" },
      telecom: [{ system: "phone", value: "+44 20 7946 0000", use: "mobile", rank: 1 }, { system: "email", value: "ada@example.org", use: "home" }],
      identifiers: [{ system: "https://fhir.nhs.uk/Id/nhs-number", value: "9434765919", type: "NHS" }],
    }),
    L("cond", "condition", "2026-01-03T09:00:00Z", {
      disease_type: "Essential hypertension", snomed_code: "59621000", icd10_codes: ["I10"], clinical_status: "active", stage: "stage 1",
      onset_date: "2018-06-01", diagnosis_date: "2018-06-15T10:30:00Z", recorded_at: "2026-01-03",
    }),
    L("allergy", "allergy_intolerance", "2026-01-03T10:00:00Z", {
      allergies: [{ allergen: "Peanut", snomed_code: "91935009", category: "food", criticality: "high", clinical_status: "active", reactions: ["anaphylaxis", "urticaria"], recorded_date: "2010-03-04" }],
    }),
    L("med", "medication_list_update", "2026-01-04T08:00:00Z", {
      medications: [{ action: "add", medication_name: "Lisinopril", rxnorm_cui: "314076", ndc_code: "68180-0513-01", dose: "10 mg", frequency: "QD", route: "oral", form: "tablet", start_date: "2018-06-15", schedule_times: ["07:30"], therapeutic_class: "ACE inhibitor", prescribed_by: { name: "Dr. Mary Seacole", npi: "1710929392" } }],
    }),
    L("imm", "immunization", "2026-01-05T11:00:00Z", {
      vaccine_name: "COVID-19 mRNA vaccine", cvx_code: "208", status: "completed", occurrence_date: "2025-09-30", dose_number: 3, lot_number: "EW0182", manufacturer: "Pfizer-BioNTech", site: "left_deltoid", route: "intramuscular",
    }),
    L("proc", "procedure", "2026-01-06T12:00:00Z", {
      procedure_name: "Echocardiography", procedure_code: "40701008", code_system: "snomed", status: "completed", performed_date: "2025-12-12", body_site: "heart", outcome: "Normal ejection fraction", reason: "Hypertension follow-up",
    }),
    L("lab1", "lab_results", "2026-01-10T07:00:00Z", {
      collection_datetime: "2026-01-10T07:00:00Z",
      results: [
        { loinc_code: "4548-4", test_name: "Hemoglobin A1c", value_numeric: 6.1, unit: "%", reference_range_low: 4, reference_range_high: 5.6, result_status: "final", specimen_type: "blood", test_category: "diabetes" },
        { loinc_code: "2823-3", test_name: "Potassium", value_numeric: 5.9, unit: "mmol/L", reference_range_low: 3.5, reference_range_high: 5.1, abnormal_flag: "H" },
      ],
    }),
    L("vitals", "vitals_measurement", "2026-01-11T09:00:00Z", {
      measurements: { systolic_bp_mmhg: 142, diastolic_bp_mmhg: 91, heart_rate_bpm: 77 }, context: { position: "sitting" }, source: "clinic", collection_datetime: "2026-01-11T09:00:00Z",
    }),
    L("lab2", "lab_results", "2026-02-10T07:00:00Z", {
      collection_datetime: "2026-02-10T07:00:00Z",
      results: [{ loinc_code: "4548-4", test_name: "Hemoglobin A1c", value_numeric: 5.8, unit: "%", reference_range_low: 4, reference_range_high: 5.6, result_status: "preliminary" }],
    }),
    L("weight", "weight_measurement", "2026-02-11T07:30:00Z", { weight_kg: 71.3 }),
    L("med2", "medication_list_update", "2026-02-12T08:00:00Z", { medications: [{ action: "add", medication_name: "Amlodipine", rxnorm_cui: "197361", dose: "5 mg", frequency: "QD" }] }),
  ];
  const r = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: logs.map((x) => x.log) } })).json();
  expect(r.accepted, JSON.stringify(r.errors?.slice(0, 3))).toBe(logs.length);
  logs.forEach((x, i) => ids.set(x.name, r.results[i].id));
});

afterAll(async () => {
  await t?.close();
});

const resourcesOf = (b: Bundle) => (b.entry ?? []).map((e) => e.resource!);
const ofType = <R extends Resource>(b: Bundle, type: R["resourceType"]) => resourcesOf(b).filter((r): r is R => r.resourceType === type);

/** Every scalar a payload sent, but `action` and the vitals' `source` (the Provenance names the log instead). */
function scalars(v: unknown, key = ""): string[] {
  if (key === "action" || key === "source") return [];
  if (Array.isArray(v)) return v.flatMap((x) => scalars(x, key));
  if (typeof v === "object" && v !== null) return Object.entries(v).flatMap(([k, x]) => scalars(x, k));
  return [String(v)];
}

describe("GET /v1/state/{pid}/fhir/summary", () => {
  let bundle: Bundle;
  let contentType: string | undefined;
  beforeAll(async () => {
    const r = await t.app.inject({ method: "GET", url: `/v1/state/${pid}/fhir/summary`, headers: t.auth });
    expect(r.statusCode, r.body).toBe(200);
    contentType = r.headers["content-type"] as string;
    bundle = r.json();
  });

  it("answers application/fhir+json: a document Bundle that validates, and every entry on its own", () => {
    expect(contentType).toContain("application/fhir+json");
    expect(bundle.type).toBe("document");
    expect(validateFhir(bundle)).toEqual([]);
    for (const r of resourcesOf(bundle)) expect(validateFhir(r), `${r.resourceType}/${r.id}`).toEqual([]);
    expect(resourcesOf(bundle)[0]!.resourceType).toBe("Composition");
    const sections = (resourcesOf(bundle)[0] as Composition).section!;
    expect(sections.map((s) => [s.code!.coding![0]!.code, s.entry?.length ?? 0])).toEqual([
      ["11450-4", 1], ["48765-2", 1], ["10160-0", 2], ["11369-6", 1], ["47519-4", 1], ["30954-2", 3], ["8716-3", 3],
    ]);
  });

  it("holds every value that went in", () => {
    const text = JSON.stringify(bundle);
    const missing = sent.flatMap((p) => scalars(p)).filter((v) => !text.includes(v.replace(/Z$/, "")));
    expect(missing).toEqual([]);
    expect(text).toContain("MRN-7731");
  });

  it("names the logs each resource came from, in its Provenance", () => {
    const provs = ofType<Provenance>(bundle, "Provenance");
    const named = new Set(provs.flatMap(logIdsOf));
    for (const [name, id] of ids) expect(named.has(id), name).toBe(true);
    const urlOf = new Map(bundle.entry!.map((e) => [e.resource, e.fullUrl]));
    const potassium = ofType<Observation>(bundle, "Observation").find((o) => o.code.coding?.[0]?.code === "2823-3")!;
    expect(provs.find((p) => p.target[0]!.reference === urlOf.get(potassium))!.entity!.map((e) => e.what.identifier!.value)).toEqual([ids.get("lab1")]);
  });

  it("as_of gives the state as it stood then: the summary without February's logs", async () => {
    const r = await t.app.inject({ method: "GET", url: `/v1/state/${pid}/fhir/summary?as_of=${CUT}`, headers: t.auth });
    expect(r.statusCode).toBe(200);
    expect(r.headers["x-pss-as-of"]).toBe("2026-02-01T00:00:00.000Z");
    const early: Bundle = r.json();
    expect(validateFhir(early)).toEqual([]);
    const text = JSON.stringify(early);
    for (const v of ["Lisinopril", "6.1", "Peanut"]) expect(text).toContain(v);
    for (const v of ["Amlodipine", "5.8", "71.3"]) expect(text).not.toContain(v);
    const named = new Set(ofType<Provenance>(early, "Provenance").flatMap(logIdsOf));
    expect([...named].sort()).toEqual(["demo", "cond", "allergy", "med", "imm", "proc", "lab1", "vitals"].map((n) => ids.get(n)).sort());
  });

  it("is the same Bundle on a second read, but for its timestamp", async () => {
    const again: Bundle = (await t.app.inject({ method: "GET", url: `/v1/state/${pid}/fhir/summary`, headers: t.auth })).json();
    const strip = (b: Bundle) => JSON.stringify({ ...b, timestamp: null, entry: b.entry!.slice(1) });
    expect(strip(again)).toBe(strip(bundle));
  });

  it("is 404 for a patient the caller cannot see", async () => {
    const r = await t.app.inject({ method: "GET", url: "/v1/state/pat_nobody/fhir/summary", headers: t.auth });
    expect(r.statusCode).toBe(404);
  });
});

describe("GET /v1/state/{pid}/fhir/{type}: searchsets", () => {
  it("Observation by code, category and date, with Provenance on request", async () => {
    const get = async (q: string) => {
      const r = await t.app.inject({ method: "GET", url: `/v1/state/${pid}/fhir/Observation?${q}`, headers: t.auth });
      expect(r.statusCode, r.body).toBe(200);
      return r.json<Bundle>();
    };
    const a1c = await get("code=http://loinc.org|4548-4");
    expect(validateFhir(a1c)).toEqual([]);
    expect(a1c).toMatchObject({ type: "searchset", total: 2 });
    expect((await get("code=4548-4&date=ge2026-02-01")).total).toBe(1);
    expect((await get("category=vital-signs")).total).toBe(3);
    expect((await get("date=ge2026-01-11&date=lt2026-01-12")).total).toBe(2);
    const withProv = await get("code=2823-3&_revinclude=Provenance:target");
    expect(withProv.entry!.map((e) => e.search!.mode)).toEqual(["match", "include"]);
    const bad = await t.app.inject({ method: "GET", url: `/v1/state/${pid}/fhir/Observation?date=yesterday`, headers: t.auth });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().message).toContain("date");
  });

  it("the other types, and the client's fhirSummary and fhirSearch", async () => {
    for (const [type, n] of [["Condition", 1], ["AllergyIntolerance", 1], ["MedicationStatement", 2], ["Immunization", 1], ["Procedure", 1]] as const) {
      const r = await t.app.inject({ method: "GET", url: `/v1/state/${pid}/fhir/${type}`, headers: t.auth });
      expect(r.json().total, type).toBe(n);
    }
    const client = new PatientStateClient({ baseUrl: baseUrl(t.app), apiKey: t.adminKey });
    const summary = await client.state.fhirSummary(pid, { asOf: CUT });
    expect(summary.type).toBe("document");
    expect(JSON.stringify(summary)).not.toContain("Amlodipine");
    const meds = await client.state.fhirSearch(pid, "Observation", { code: "8867-4" });
    expect(meds.total).toBe(1);
  });
});
