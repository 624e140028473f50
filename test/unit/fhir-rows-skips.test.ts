import { describe, expect, it } from "vitest";
import { FhirRows } from "../../src/ingestion/fhir-rows.js";

const MRN = "urn:oid:2.16.840.1.113883.19.5";
const patient = { resourceType: "Patient", id: "p1", identifier: [{ system: MRN, value: "M-1" }] };
/** A Condition no mapper takes: its clinical status is no R4 code. */
const unmappable = (reference: string) => ({
  resourceType: "Condition",
  id: "c1",
  clinicalStatus: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/condition-clinical", code: "bogus" }] },
  code: { text: "Asthma" },
  subject: { reference },
  recordedDate: "2024-04-03T10:00:00Z",
});

describe("FhirRows: the patient of a resource skipped at conversion", () => {
  it("names the patient a lone resource references, as its log rows would", () => {
    const rows = new FhirRows("2026-01-01T00:00:00Z");
    rows.patientRows(JSON.stringify(patient));
    const o = rows.logRows(JSON.stringify(unmappable("Patient/p1")), 2);
    expect(o).toMatchObject({ rows: [], skipped: 1, skippedFor: [`${MRN}|M-1`] });
  });

  it("names the patient a Bundle entry references by urn:uuid", () => {
    const rows = new FhirRows("2026-01-01T00:00:00Z");
    const bundle = {
      resourceType: "Bundle",
      type: "collection",
      entry: [
        { fullUrl: "urn:uuid:6f0c1a52-0000-4000-8000-000000000001", resource: { ...patient, id: "other" } },
        { fullUrl: "urn:uuid:6f0c1a52-0000-4000-8000-000000000002", resource: unmappable("urn:uuid:6f0c1a52-0000-4000-8000-000000000001") },
      ],
    };
    rows.patientRows(JSON.stringify(bundle));
    expect(rows.logRows(JSON.stringify(bundle), 1)).toMatchObject({ skipped: 1, skippedFor: [`${MRN}|M-1`] });
  });

  it("names no patient for a resource that references none", () => {
    const o = new FhirRows().logRows(JSON.stringify({ resourceType: "SupplyDelivery", id: "s1", status: "completed" }), 1);
    expect(o).toMatchObject({ skipped: 1, skippedFor: [] });
  });
});
