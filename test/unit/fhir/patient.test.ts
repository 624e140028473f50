import { describe, expect, it } from "vitest";
import type { Patient } from "@medplum/fhirtypes";
import { derived, refused } from "./derive-helpers.js";
import { folded } from "./fold-helpers.js";
import { given, log } from "../readmodels/given.js";
import { patientResource } from "../../../fhir/outbound/patient.js";

const US_CORE = "http://hl7.org/fhir/us/core/StructureDefinition";
const omb = "urn:oid:2.16.840.1.113883.6.238";

/** After the R4 specification's example patient (several names, contacts of each use, an old address), with US Core's extensions; written anew. */
const rosa: Patient = {
  resourceType: "Patient",
  id: "pt-rosa",
  meta: { lastUpdated: "2025-11-03T14:12:09.221Z" },
  extension: [
    { url: `${US_CORE}/us-core-race`, extension: [{ url: "ombCategory", valueCoding: { system: omb, code: "2106-3", display: "White" } }, { url: "text", valueString: "White" }] },
    { url: `${US_CORE}/us-core-ethnicity`, extension: [{ url: "ombCategory", valueCoding: { system: omb, code: "2135-2", display: "Hispanic or Latino" } }] },
  ],
  identifier: [
    {
      use: "usual",
      type: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/v2-0203", code: "MR", display: "Medical Record Number" }], text: "MRN" },
      system: "urn:oid:2.16.840.1.113883.19.5", value: "00417342",
    },
    { use: "old", system: "urn:oid:2.16.840.1.113883.19.9", value: "A-1187" },
  ],
  name: [
    { use: "usual", given: ["Rosie"] },
    { use: "official", family: "Delgado", given: ["Rosa", "Maria"] },
    { use: "maiden", family: "Ruiz", given: ["Rosa"] },
  ],
  telecom: [
    { system: "phone", value: "(03) 5555 6473", use: "work", rank: 1 },
    { system: "phone", value: "(03) 3410 5613", use: "mobile", rank: 2 },
    { system: "email", value: "rosa.delgado@example.org", use: "home" },
    { system: "phone", value: "(03) 5555 8834", use: "old", period: { end: "2019-01-01" } },
  ],
  gender: "female",
  birthDate: "1981-07-09",
  deceasedBoolean: false,
  address: [
    { use: "old", line: ["12 Harbour Rd"], city: "Geelong", state: "VIC", postalCode: "3220" },
    { use: "work", line: ["200 Collins St", "Level 9"], city: "Melbourne", state: "VIC", postalCode: "3000", country: "AU" },
    { use: "home", line: ["48 Wattle Grove"], city: "Brunswick", state: "VIC", postalCode: "3056", country: "AU" },
  ],
  maritalStatus: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/v3-MaritalStatus", code: "M" }] },
  communication: [
    { language: { coding: [{ system: "urn:ietf:bcp:47", code: "en-AU" }] } },
    { language: { coding: [{ system: "urn:ietf:bcp:47", code: "es-MX", display: "Spanish (Mexico)" }] }, preferred: true },
  ],
};

const home = { street: "48 Wattle Grove", city: "Brunswick", state: "VIC", zip: "3056", country: "AU" };
const work = { street: "200 Collins St, Level 9", city: "Melbourne", state: "VIC", zip: "3000", country: "AU" };

describe("Patient", () => {
  it("becomes demographics with the official name, current contacts and addresses, and US Core ethnicity", () => {
    const [log, ...rest] = derived(rosa);
    expect(rest).toEqual([]);
    expect(log).toMatchObject({ log_type: "demographics", timestamp: "2025-11-03T14:12:09.221Z", trace: { object_type: "Patient", object_id: "pt-rosa" } });
    expect(log!.payload).toEqual({
      name: "Rosa Maria Delgado", dob: "1981-07-09", sex: "female", marital_status: "married",
      address: home, addresses: [work, home],
      telecom: [
        { system: "phone", value: "(03) 5555 6473", use: "work", rank: 1 },
        { system: "phone", value: "(03) 3410 5613", use: "mobile", rank: 2 },
        { system: "email", value: "rosa.delgado@example.org", use: "home" },
      ],
      identifiers: [{ system: "urn:oid:2.16.840.1.113883.19.5", value: "00417342", type: "MRN" }],
      language: "es-MX", ethnicity: "Hispanic or Latino",
      extensions: { race: "White", name_parts: { name: "Rosa Maria Delgado", given: ["Rosa", "Maria"], family: "Delgado" } },
    });
  });

  it("lands in the demographics module, and a newer version of the record wins over an older one sent later", () => {
    const moved = { ...rosa, meta: { lastUpdated: "2026-02-01T09:00:00Z" }, address: [{ use: "home" as const, city: "Ballarat", state: "VIC" }] };
    const doc = folded("demographics", derived(moved), derived(rosa));
    expect(doc).toMatchObject({ name: "Rosa Maria Delgado", dob: "1981-07-09", sex: "female", language: "es-MX", address: { city: "Ballarat", state: "VIC" }, addresses: [{ city: "Ballarat", state: "VIC" }] });
  });

  it("gives back every given name, not only the patient record's first name", () => {
    const peter = { ...rosa, name: [{ use: "official" as const, family: "Chalmers", given: ["Peter", "James"] }] };
    const doc = folded("demographics", derived(peter));
    const record = { id: "p1", first_name: "Peter", last_name: "Chalmers", email: null, phone_number: null, date_of_birth: null, sex: null, external_identifiers: [] };
    expect(patientResource({ state: given([]), patient: record }).resource.name).toEqual([{ use: "official", text: "Peter Chalmers", family: "Chalmers", given: ["Peter"] }]);
    const withDemographics = patientResource({ state: given(derived(peter).map((l) => log(l.log_type, "2026-01-01T00:00:00Z", l.payload))), patient: record });
    expect(doc.name).toBe("Peter James Chalmers");
    expect(withDemographics.resource.name).toEqual([{ use: "official", text: "Peter James Chalmers", family: "Chalmers", given: ["Peter", "James"] }]);
  });

  it("leaves out a birth date of only a year, which dob cannot hold", () => {
    const payload = derived({ ...rosa, birthDate: "1981" })[0]!.payload;
    expect(payload).not.toHaveProperty("dob");
    expect(payload.name).toBe("Rosa Maria Delgado");
  });

  it("refuses a patient record that holds nothing demographics keeps", () => {
    const out = refused({ resourceType: "Patient", id: "pt-empty", active: true });
    expect(out).toMatchObject({ code: "fhir_unmappable", issues: [{ path: [] }] });
    expect(out.message).toMatch(/holds nothing/);
  });

  it("refuses invalid FHIR (a birth date in a local format) with the element's path", () => {
    expect(refused({ ...rosa, birthDate: "09/07/1981" })).toMatchObject({ code: "fhir_invalid", issues: [{ path: ["birthDate"] }] });
  });
});
