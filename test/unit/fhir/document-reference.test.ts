import { describe, expect, it } from "vitest";
import type { DocumentReference } from "@medplum/fhirtypes";
import { derived, refused } from "./derive-helpers.js";
import { folded } from "./fold-helpers.js";

const base64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const loinc = (code: string, display: string) => ({ coding: [{ system: "http://loinc.org", code, display }] });
const PROGRESS = "S: Fatigue improving, no fever.\nO: Afebrile, weight 71.2 kg.\nA/P: Tolerating cycle 4; continue.";

/** After the R4 specification's example of a note with its type, author, custodian and encounter, its text inline (written anew). */
const progressNote: DocumentReference = {
  resourceType: "DocumentReference",
  id: "doc-pn-0412",
  status: "current",
  docStatus: "final",
  type: loinc("11506-3", "Progress note"),
  category: [{ coding: [{ system: "http://hl7.org/fhir/us/core/CodeSystem/us-core-documentreference-category", code: "clinical-note", display: "Clinical Note" }] }],
  subject: { reference: "Patient/example" },
  date: "2025-04-02T10:20:00+01:00",
  author: [{ reference: "Practitioner/dr-hale", display: "Dr. Imogen Hale" }],
  custodian: { display: "Riverside Cancer Centre" },
  description: "Oncology clinic progress note",
  content: [
    { attachment: { contentType: "application/pdf", url: "https://ehr.example.org/docs/pn-0412.pdf" } },
    { attachment: { contentType: "text/plain; charset=utf-8", data: base64(PROGRESS) } },
  ],
  context: { encounter: [{ reference: "Encounter/enc-0412" }], period: { start: "2025-04-02T09:30:00+01:00" } },
};

const pathology: DocumentReference = {
  resourceType: "DocumentReference",
  id: "doc-path-77",
  status: "current",
  type: loinc("11526-1", "Pathology study"),
  subject: { reference: "Patient/example" },
  date: "2025-03-18T16:45:00Z",
  content: [{ attachment: { contentType: "text/plain", data: base64("Left breast core biopsy: invasive ductal carcinoma, grade 2. ER+ PR+ HER2-."), title: "Core biopsy report" } }],
};

describe("DocumentReference", () => {
  it("becomes a clinical_note when its type is a clinical note, with the decoded text as its one section", () => {
    const [log, ...rest] = derived(progressNote);
    expect(rest).toEqual([]);
    expect(log).toMatchObject({
      log_type: "clinical_note",
      timestamp: "2025-04-02T10:20:00+01:00",
      payload: {
        note_type: "progress_note", loinc_code: "11506-3", authored_by: { name: "Dr. Imogen Hale" }, authored_date: "2025-04-02", encounter_id: "enc-0412",
        source: { type: "ehr", name: "Riverside Cancer Centre" }, sections: [{ section_label: "Oncology clinic progress note", content: PROGRESS }],
      },
    });
  });

  it("names each of the catalog's note types by its LOINC code, and other clinical notes other", () => {
    const types = { "18842-5": "discharge_summary", "34117-2": "history_and_physical", "11488-4": "consultation_note", "28570-0": "other" };
    for (const [code, note_type] of Object.entries(types)) {
      expect(derived({ ...progressNote, type: loinc(code, "note") })[0]!.payload.note_type).toBe(note_type);
    }
  });

  it("becomes an unstructured_report when it is not a clinical note", () => {
    expect(derived(pathology)[0]).toMatchObject({
      log_type: "unstructured_report",
      timestamp: "2025-03-18T16:45:00Z",
      payload: {
        report_id: "doc-path-77", report_type: "pathology_study", title: "Core biopsy report", status: "current", mime_type: "text/plain",
        authored_date: "2025-03-18T16:45:00Z", content: "Left breast core biopsy: invasive ductal carcinoma, grade 2. ER+ PR+ HER2-.",
      },
    });
  });

  it("lands in clinical_context's notes and reports; a report entered in error is withdrawn", () => {
    const doc = folded("clinical_context", derived(progressNote), derived(pathology));
    expect(doc.notes).toEqual([expect.objectContaining({ note_type: "progress_note", encounter_id: "enc-0412", sections: [{ section_label: "Oncology clinic progress note", content: PROGRESS }] })]);
    expect(doc.reports).toEqual([expect.objectContaining({ key: "doc-path-77", report_type: "pathology_study" })]);
    const wrong = derived({ ...pathology, status: "entered-in-error" });
    expect(folded("clinical_context", derived(pathology), wrong).reports).toEqual([]);
  });

  it("refuses a document whose text is only behind a URL or not text, saying to inline it", () => {
    const byUrl = refused({ ...pathology, content: [{ attachment: { contentType: "text/plain", url: "https://ehr.example.org/docs/77.txt" } }] });
    expect(byUrl).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["content", 0, "attachment", "data"] }] });
    expect(byUrl.message).toMatch(/inline the document's text as base64 attachment\.data/);
    const pdf = refused({ ...pathology, content: [{ attachment: { contentType: "application/pdf", data: base64("%PDF-1.7") } }] });
    expect(pdf).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["content", 0, "attachment", "contentType"] }] });
  });

  it("refuses a clinical note entered in error, which the catalog cannot withdraw", () => {
    expect(refused({ ...progressNote, status: "entered-in-error" })).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["status"] }] });
  });

  it("refuses a status outside the R4 codes at status, rather than leaving it out", () => {
    expect(refused({ ...pathology, status: "bogus" as never })).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["status"], message: expect.stringMatching(/current, superseded/) }] });
  });

  it("refuses inline data without a content type (att-1, which the validator lets through) at its contentType", () => {
    const out = refused({ ...pathology, content: [{ attachment: { data: base64("text") } }] });
    expect(out).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["content", 0, "attachment", "contentType"] }] });
  });

  it("refuses invalid FHIR (a document without content) with the element's path", () => {
    expect(refused({ ...pathology, content: [] })).toMatchObject({ code: "fhir_invalid", issues: [{ path: ["content"] }] });
  });
});
