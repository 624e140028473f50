import { describe, expect, it } from "vitest";
import type { Condition } from "@medplum/fhirtypes";
import { derived, refused } from "./derive-helpers.js";
import { folded } from "./fold-helpers.js";
import { conditionResource } from "../../../fhir/outbound/conditions.js";

/** After the R4 specification's example of a problem-list condition (written anew). */
const heartFailure: Condition = {
  resourceType: "Condition",
  id: "hf-1",
  clinicalStatus: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/condition-clinical", code: "active" }] },
  verificationStatus: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/condition-ver-status", code: "confirmed" }] },
  category: [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/condition-category", code: "encounter-diagnosis" }] }],
  code: {
    coding: [
      { system: "http://snomed.info/sct", code: "84114007", display: "Heart failure" },
      { system: "http://hl7.org/fhir/sid/icd-10-cm", code: "I50.9" },
    ],
    text: "Heart failure",
  },
  subject: { reference: "Patient/example" },
  onsetDateTime: "2025-09-14",
  recordedDate: "2025-09-20T10:15:00+02:00",
};

describe("Condition", () => {
  it("becomes a condition log named by its codes, with its status, dates and source", () => {
    const [log, ...rest] = derived(heartFailure);
    expect(rest).toEqual([]);
    expect(log).toMatchObject({
      log_type: "condition",
      timestamp: "2025-09-20T10:15:00+02:00",
      payload: {
        disease_type: "Heart failure", snomed_code: "84114007", icd10_codes: ["I50.9"], clinical_status: "active",
        onset_date: "2025-09-14", recorded_at: "2025-09-20T10:15:00+02:00",
      },
      trace: { object_type: "Condition", object_id: "hf-1" },
      metadata: { fhir_reference: "Condition/hf-1", fhir_resource: heartFailure },
    });
  });

  it("takes entered-in-error as the correction, and FHIR's own invariants (con-4) are checked", () => {
    const wrong = derived({ ...heartFailure, verificationStatus: { coding: [{ code: "entered-in-error" }] } })[0]!;
    expect(wrong.payload.clinical_status).toBe("entered_in_error");
    expect(refused({ ...heartFailure, abatementDateTime: "2026-01-02" }).message).toMatch(/con-4/);
    const resolved = { ...heartFailure, abatementDateTime: "2026-01-02", clinicalStatus: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/condition-clinical", code: "resolved" }] } };
    expect(derived(resolved)[0]!.payload.clinical_status).toBe("resolved");
  });

  it("refuses a clinical or verification status outside its R4 codes, at the code, naming the valid ones", () => {
    // Read as no status, a bogus code stored the condition as active.
    const bogus = refused({ ...heartFailure, clinicalStatus: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/condition-clinical", code: "bogus" }] } });
    expect(bogus).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["clinicalStatus", "coding", 0, "code"] }] });
    expect(bogus.issues[0]!.message).toMatch(/bogus .*active, recurrence, relapse, inactive, remission, resolved/);
    const unverifiable = refused({ ...heartFailure, verificationStatus: { coding: [{ code: "maybe" }] } });
    expect(unverifiable.issues).toMatchObject([{ path: ["verificationStatus", "coding", 0, "code"], message: expect.stringMatching(/confirmed, refuted, entered-in-error/) }]);
    const uncoded = refused({ ...heartFailure, clinicalStatus: { text: "resolved" } });
    expect(uncoded.issues).toMatchObject([{ path: ["clinicalStatus"], message: expect.stringMatching(/condition-clinical/) }]);
  });

  it("keeps the newer version's status whichever version arrives last: each is dated when its status was asserted", () => {
    const clinical = (code: string) => ({ coding: [{ system: "http://terminology.hl7.org/CodeSystem/condition-clinical", code }] });
    const asthma: Condition = { resourceType: "Condition", subject: { reference: "Patient/example" }, code: { text: "Asthma" }, onsetDateTime: "2024-05-01" };
    const v1: Condition = { ...asthma, id: "asthma-v1", meta: { lastUpdated: "2024-05-02T00:00:00Z" }, clinicalStatus: clinical("active") };
    const v2: Condition = { ...asthma, id: "asthma-v2", meta: { lastUpdated: "2026-11-01T00:00:00Z" }, clinicalStatus: clinical("resolved"), abatementDateTime: "2026-10-15" };
    // Active: at its onset (no recordedDate here), not its lastUpdated, so a state as of 2025 holds it.
    expect(derived(v1)[0]!.timestamp).toBe("2024-05-01T00:00:00Z");
    // Resolved: dated at its abatement, which the payload keeps (the catalog has no field for it, so in extensions).
    expect(derived(v2)[0]).toMatchObject({ timestamp: "2026-10-15T00:00:00Z", payload: { onset_date: "2024-05-01", clinical_status: "resolved", extensions: { abatement_date: "2026-10-15" } } });
    for (const order of [[v2, v1], [v1, v2]]) {
      const [held, ...rest] = folded("condition_diagnosis", ...order.map((v) => derived(v))).conditions;
      expect(rest).toEqual([]);
      expect(held).toMatchObject({ disease_type: "Asthma", status: "resolved", onset_date: "2024-05-01", extensions: { abatement_date: "2026-10-15" } });
    }
    // Resolved without an abatement: its lastUpdated, else its recordedDate, else its onset.
    const { abatementDateTime: _a, ...unabated } = v2;
    expect(derived(unabated)[0]!.timestamp).toBe("2026-11-01T00:00:00Z");
    const { meta: _m, ...unversioned } = unabated;
    expect(derived({ ...unversioned, recordedDate: "2024-06-01" })[0]!.timestamp).toBe("2024-06-01T00:00:00Z");
    expect(derived(unversioned)[0]!.timestamp).toBe("2024-05-01T00:00:00Z");
  });

  it("dates a recurrence at its version's lastUpdated, so it reopens a condition resolved before it", () => {
    const clinical = (code: string) => ({ coding: [{ system: "http://terminology.hl7.org/CodeSystem/condition-clinical", code }] });
    const asthma: Condition = { resourceType: "Condition", subject: { reference: "Patient/example" }, code: { text: "Asthma" }, onsetDateTime: "2024-05-01" };
    const resolved: Condition = { ...asthma, id: "v2", meta: { lastUpdated: "2026-11-01T00:00:00Z" }, clinicalStatus: clinical("resolved"), abatementDateTime: "2026-10-15" };
    const back: Condition = { ...asthma, id: "v3", meta: { lastUpdated: "2027-01-05T00:00:00Z" }, clinicalStatus: clinical("recurrence") };
    expect(derived(back)[0]!.timestamp).toBe("2027-01-05T00:00:00Z");
    for (const order of [[resolved, back], [back, resolved]]) {
      expect(folded("condition_diagnosis", ...order.map((v) => derived(v))).conditions).toEqual([expect.objectContaining({ disease_type: "Asthma", status: "active" })]);
    }
    // Read back: the abatement while resolved, none once it came back.
    const out = (...versions: Condition[]) => conditionResource("p1", folded("condition_diagnosis", ...versions.map((v) => derived(v))).conditions[0]!)!.resource;
    expect(out(resolved).abatementDateTime).toBe("2026-10-15");
    expect(out(resolved, back).abatementDateTime).toBeUndefined();
  });

  it("gives each ICD-10 code back in the system it came in: ICD-10-CM stays ICD-10-CM, WHO ICD-10 stays ICD-10", () => {
    const icd = (system: string, code: string) => ({ system: `http://hl7.org/fhir/sid/${system}`, code });
    const diabetes: Condition = { resourceType: "Condition", subject: { reference: "Patient/example" }, code: { coding: [icd("icd-10-cm", "E11.65"), icd("icd-10", "E11.6")], text: "Type 2 diabetes with hyperglycemia" } };
    const [log] = derived(diabetes);
    expect(log!.payload).toMatchObject({ icd10_codes: ["E11.65", "E11.6"], extensions: { icd10_code_systems: { "E11.65": icd("icd-10-cm", "").system, "E11.6": icd("icd-10", "").system } } });
    const out = conditionResource("p1", folded("condition_diagnosis", [log!]).conditions[0]!)!.resource;
    expect(out.code?.coding).toEqual([icd("icd-10-cm", "E11.65"), icd("icd-10", "E11.6")]);
  });

  it("gives back its verificationStatus, and a diagnosis date only from an assertedDate given with a time, never from the onset", () => {
    const out = (c: Condition) => conditionResource("p1", folded("condition_diagnosis", derived(c)).conditions[0]!)!.resource;
    const fromOnset = out({ ...heartFailure, onsetDateTime: "2020-01-01" });
    expect(fromOnset.verificationStatus).toEqual(heartFailure.verificationStatus);
    expect(fromOnset.extension).toBeUndefined();
    const asserted = (valueDateTime: string) => ({ ...heartFailure, extension: [{ url: "http://hl7.org/fhir/StructureDefinition/condition-assertedDate", valueDateTime }] });
    expect(out(asserted("2025-09-15T08:30:00+02:00")).extension).toEqual([{ url: "http://hl7.org/fhir/StructureDefinition/condition-assertedDate", valueDateTime: "2025-09-15T08:30:00+02:00" }]);
    expect(out(asserted("2025-09-15")).extension).toBeUndefined();
  });

  it("refuses a condition without any name, saying where to put one", () => {
    const { code: _c, ...unnamed } = heartFailure;
    const out = refused(unnamed);
    expect(out.code).toBe("fhir_unmappable");
    expect(out.issues[0]!.path).toEqual(["code"]);
  });

  it("refuses invalid FHIR with the element's path", () => {
    const out = refused({ ...heartFailure, onsetDateTime: "2025-13-45" });
    expect(out).toMatchObject({ code: "fhir_invalid", issues: [{ path: ["onsetDateTime"] }] });
  });

  it("names the mapped types for a resource type it does not map", () => {
    const out = refused({ resourceType: "SupplyDelivery", id: "s1" } as never);
    expect(out.message).toMatch(/SupplyDelivery is not mapped.*Condition/);
  });
});

describe("dates", () => {
  it("refuses a day that does not exist, which the R4 patterns let through, at its element", () => {
    expect(refused({ ...heartFailure, onsetDateTime: "2024-02-30" }).issues).toEqual([{ path: ["onsetDateTime"], message: "is not a real date or time: 2024-02-30" }]);
    expect(refused({ ...heartFailure, recordedDate: "2025-04-31T10:00:00Z" }).issues[0]!.path).toEqual(["recordedDate"]);
    expect(derived({ ...heartFailure, onsetDateTime: "2024-02-29" })[0]!.payload.onset_date).toBe("2024-02-29");
    // Years 0-99 are themselves: 0050 is no leap year's shorthand for 1950.
    expect(refused({ ...heartFailure, onsetDateTime: "0100-02-29" }).issues[0]!.path).toEqual(["onsetDateTime"]);
    expect(derived({ ...heartFailure, onsetDateTime: "0004-02-29" })[0]!.payload.onset_date).toBe("0004-02-29");
  });

  it("refuses a dateTime with a time and no zone, which R4 forbids and the definitions let through, at its element", () => {
    for (const v of ["2026-11-01T10:00:00", "2026-11-01T10:00:00.123"]) {
      const issues = refused({ ...heartFailure, onsetDateTime: v }).issues;
      expect(issues).toEqual([{ path: ["onsetDateTime"], message: expect.stringContaining(`has a time but no time zone: ${v}`) }]);
    }
    // Without seconds too (the definitions' own pattern refuses that one).
    expect(refused({ ...heartFailure, onsetDateTime: "2026-11-01T10:00" }).issues[0]!.path).toEqual(["onsetDateTime"]);
    expect(derived({ ...heartFailure, onsetDateTime: "2026-11-01T10:00:00+01:00" })).toHaveLength(1);
  });
});
