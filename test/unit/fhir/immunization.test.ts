import { describe, expect, it } from "vitest";
import type { Immunization, Practitioner } from "@medplum/fhirtypes";
import { derived, refused } from "./derive-helpers.js";
import { folded } from "./fold-helpers.js";

const nurse: Practitioner = {
  resourceType: "Practitioner",
  id: "rn-ortiz",
  identifier: [{ system: "http://hl7.org/fhir/sid/us-npi", value: "1588667638" }],
  name: [{ use: "official", family: "Ortiz", given: ["Lena"] }],
};

/** After the R4 specification's example of an influenza dose given in the deltoid (written anew). */
const flu: Immunization = {
  resourceType: "Immunization",
  id: "imm-flu-2025",
  status: "completed",
  vaccineCode: {
    coding: [{ system: "http://hl7.org/fhir/sid/cvx", code: "150", display: "Influenza, injectable, quadrivalent, preservative free" }],
    text: "Influenza vaccine (quadrivalent)",
  },
  patient: { reference: "Patient/example" },
  occurrenceDateTime: "2025-10-14T15:40:00-04:00",
  recorded: "2025-10-14T16:05:00-04:00",
  primarySource: true,
  manufacturer: { display: "Seqirus" },
  lotNumber: "QX7741B",
  expirationDate: "2026-06-30",
  site: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/v3-ActSite", code: "LD", display: "left deltoid" }] },
  route: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/v3-RouteOfAdministration", code: "IM", display: "Injection, intramuscular" }] },
  doseQuantity: { value: 0.5, unit: "mL", system: "http://unitsofmeasure.org", code: "mL" },
  performer: [
    { function: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/v2-0443", code: "OP", display: "Ordering Provider" }] }, actor: { display: "Dr. Hal Brenner" } },
    { function: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/v2-0443", code: "AP", display: "Administering Provider" }] }, actor: { reference: "Practitioner/rn-ortiz" } },
  ],
  protocolApplied: [{ series: "2025-26 season", doseNumberPositiveInt: 1 }],
};

describe("Immunization", () => {
  it("becomes one dose with its CVX code, date, lot, site, route and administering nurse", () => {
    const [log, ...rest] = derived(flu, nurse);
    expect(rest).toEqual([]);
    expect(log).toMatchObject({
      log_type: "immunization",
      timestamp: "2025-10-14T15:40:00-04:00",
      payload: {
        vaccine_name: "Influenza vaccine (quadrivalent)", cvx_code: "150", status: "completed", occurrence_date: "2025-10-14T15:40:00-04:00",
        dose_number: 1, lot_number: "QX7741B", manufacturer: "Seqirus", site: "left_deltoid", route: "intramuscular",
        performer: { name: "Lena Ortiz", npi: "1588667638", role: "Administering Provider" },
      },
      trace: { object_type: "Immunization", object_id: "imm-flu-2025" },
    });
  });

  it("lands in the immunizations module keyed by CVX code and day, and a later correction withdraws it", () => {
    const doc = folded("immunizations", derived(flu, nurse));
    expect(doc.immunizations).toEqual([
      expect.objectContaining({ vaccine: "Influenza vaccine (quadrivalent)", cvx_code: "150", administered_date: "2025-10-14T15:40:00-04:00", dose_number: 1, status: "completed" }),
    ]);
    const wrong = derived({ ...flu, status: "entered-in-error" });
    expect(wrong[0]!.payload.status).toBe("entered_in_error");
    expect(folded("immunizations", derived(flu, nurse), wrong).immunizations).toEqual([]);
  });

  it("records a dose not given, by date alone", () => {
    const declined = derived({
      ...flu, id: "imm-declined", status: "not-done", occurrenceDateTime: "2024-10-02", performer: undefined, lotNumber: undefined,
      statusReason: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/v3-ActReason", code: "PATOBJ", display: "patient objection" }] },
    });
    expect(declined[0]!.payload).toMatchObject({ status: "not_done", occurrence_date: "2024-10-02" });
    expect(declined[0]!.payload).not.toHaveProperty("performer");
  });

  it("refuses a dose dated only in words, at occurrenceString", () => {
    const { occurrenceDateTime: _d, ...undated } = flu;
    const out = refused({ ...undated, occurrenceString: "last autumn" });
    expect(out).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["occurrenceString"] }] });
    expect(out.message).toMatch(/occurrenceDateTime/);
  });

  it("refuses invalid FHIR (a dose number of zero) with the element's path", () => {
    const out = refused({ ...flu, protocolApplied: [{ doseNumberPositiveInt: 0 }] });
    expect(out).toMatchObject({ code: "fhir_invalid", issues: [{ path: ["protocolApplied", 0, "doseNumberPositiveInt"] }] });
  });
});
