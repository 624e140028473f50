import type { DocumentReference } from "@medplum/fhirtypes";
import { codingIn, conceptText, dateOf, dateOrInstant, referencedId, resourceKey, snakeCase, SYSTEMS } from "../lib/datatypes.js";
import { clinicianOf, nameOf } from "../lib/people.js";
import { checkCode, DOCUMENT_REFERENCE_STATUS } from "../lib/statuses.js";
import { unmappable, type MapOutcome, type Mapper } from "../types.js";

/** LOINC document types → the catalog's note_type (the catalog's recommended codes first). */
const NOTE_TYPES: Record<string, string> = {
  "11506-3": "progress_note", "34117-2": "history_and_physical", "11488-4": "consultation_note", "18842-5": "discharge_summary",
  "29762-2": "social_history", "10157-6": "family_history", "11348-0": "medical_history", "10167-5": "surgical_history",
};

/** LOINC types of the other clinical notes (US Core's clinical note types): note_type other. */
const OTHER_NOTES = new Set(["28570-0", "57133-1", "34111-5", "11504-8", "34746-8", "34108-1"]);

const US_CORE_CATEGORY = "http://hl7.org/fhir/us/core/CodeSystem/us-core-documentreference-category";

/** DocumentReference status → unstructured_report status. */
const STATUS: Record<string, string> = { current: "current", superseded: "superseded", "entered-in-error": "entered_in_error" };

type Inline = { ok: true; text: string; mime: string; title?: string } | { ok: false; outcome: MapOutcome };

/**
 * The document's text: the first content whose attachment carries text/* data inline,
 * decoded from base64 in its charset. attachment.url is never fetched (the mapping does
 * no I/O), so a document given only by URL, or only as PDF or an image, has no text here.
 */
function inlineText(d: DocumentReference): Inline {
  for (const c of d.content) {
    const { data, contentType, title } = c.attachment;
    if (!data || !contentType?.toLowerCase().startsWith("text/")) continue;
    const charset = /charset=([^;]+)/i.exec(contentType)?.[1]?.trim().toLowerCase();
    const text = Buffer.from(data, "base64").toString(charset === "iso-8859-1" || charset === "latin1" ? "latin1" : "utf8").trim();
    if (text) return { ok: true, text, mime: contentType.split(";")[0]!.trim(), ...(title ? { title } : {}) };
  }
  const binary = d.content.findIndex((c) => c.attachment.data);
  const path = binary >= 0 ? ["content", binary, "attachment", "contentType"] : ["content", 0, "attachment", "data"];
  return { ok: false, outcome: unmappable(path, "no text/* content is inline: inline the document's text as base64 attachment.data with a text/* contentType (attachment.url is not fetched, other media are not read)") };
}

/**
 * DocumentReference → clinical_note when its type is a clinical note (a LOINC note type,
 * or US Core's clinical-note category), else unstructured_report. A note is one section
 * holding the whole text: FHIR does not split a document into the catalog's sections.
 */
export const mapDocumentReference: Mapper<DocumentReference> = (d, ctx) => {
  const key = resourceKey(d);
  const status = checkCode(d.status, DOCUMENT_REFERENCE_STATUS, ["status"]);
  if (!status.ok) return { ok: false, issues: [status.issue] };
  const loinc = codingIn(d.type, SYSTEMS.loinc)?.code;
  const clinicalCategory = d.category?.some((c) => codingIn(c, US_CORE_CATEGORY)?.code === "clinical-note");
  const note_type = (loinc && NOTE_TYPES[loinc]) ?? ((loinc && OTHER_NOTES.has(loinc)) || clinicalCategory ? "other" : undefined);
  // The catalog's clinical_note has no correction; refusing keeps a note known to be wrong out.
  if (note_type && d.status === "entered-in-error") {
    return unmappable(["status"], "is entered-in-error, and the catalog's clinical_note has no correction to withdraw a note with: nothing is recorded for it");
  }
  const inline = inlineText(d);
  if (!inline.ok) return inline.outcome;
  const author = clinicianOf(d.author?.[0], ctx);
  const encounter_id = referencedId(d.context?.encounter?.[0], "Encounter");
  const title = d.description ?? inline.title;
  if (note_type) {
    const label = title ?? conceptText(d.type) ?? note_type;
    const authored_date = dateOf(d.date);
    const custodian = nameOf(d.custodian, ctx);
    const payload: Record<string, unknown> = {
      note_type, ...(loinc ? { loinc_code: loinc } : {}), ...(author ? { authored_by: author } : {}), ...(authored_date ? { authored_date } : {}),
      ...(encounter_id ? { encounter_id } : {}), source: { type: "ehr", ...(custodian ? { name: custodian } : {}) },
      sections: [{ section_label: label, content: inline.text }],
    };
    return { ok: true, logs: [{ log_type: "clinical_note", payload }] };
  }
  const authored = dateOrInstant(d.date);
  const payload: Record<string, unknown> = {
    report_id: key, report_type: snakeCase(conceptText(d.type)) ?? snakeCase(conceptText(d.category?.[0])) ?? "document", content: inline.text,
    ...(title ? { title } : {}), ...(STATUS[d.status] ? { status: STATUS[d.status] } : {}), mime_type: inline.mime, ...(authored ? { authored_date: authored } : {}),
    ...(author ? { author } : {}), ...(encounter_id ? { encounter_id } : {}),
  };
  return { ok: true, logs: [{ log_type: "unstructured_report", payload }] };
};
