import { createHash } from "node:crypto";
import type { CodeableConcept, Coding, Device, Narrative, Patient, Practitioner, Reference, Resource } from "@medplum/fhirtypes";
import type { PatientState } from "../../readmodels/patient-state.js";
import { SYSTEMS } from "../lib/datatypes.js";
import { EXTENSION_KEYS } from "../lib/extensions.js";
import type { StatusCodes } from "../lib/statuses.js";

/** The identifier system of the service's log ids (Provenance.entity.what.identifier). */
export const LOG_SYSTEM = "urn:pss:log";
/** The identifier system of the service's patient ids. */
export const PATIENT_SYSTEM = "urn:pss:patient";
/** Who assembled a resource: the service itself (a display-only reference). */
export const SERVICE: Reference<Device> = { display: "Patient State Service" };

/** The patient record fields a summary reads (src/control/patients.ts Patient has them all). */
export interface PatientRecord {
  id: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone_number: string | null;
  date_of_birth: string | null;
  sex: string | null;
  external_identifiers: readonly { system: string; value: string }[];
}

/** What every mapper is given: the compiled state and the patient record it belongs to. */
export interface OutboundInput {
  state: PatientState;
  patient: PatientRecord;
}

/**
 * One resource with where it came from: its stable `fullUrl` (urn:uuid), the ids of the
 * logs it was compiled from, and the event time it was last changed (Provenance.recorded).
 */
export interface Mapped<R extends Resource = Resource> {
  fullUrl: string;
  resource: R;
  logIds: string[];
  recorded: string;
}

/**
 * A name-based UUID (version 5 layout, SHA-1) of `parts`: the same patient and entity
 * always give the same id, so two reads of one state give the same resources.
 */
export function stableUuid(...parts: string[]): string {
  const h = createHash("sha1").update(parts.join("\u0000")).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** A resource of `type` with its stable id, fullUrl and the logs it came from. */
export function mapped<R extends Resource>(patientId: string, key: string[], resource: Omit<R, "id">, logIds: readonly string[], recorded: string): Mapped<R> {
  const id = stableUuid(patientId, resource.resourceType, ...key);
  return { fullUrl: `urn:uuid:${id}`, resource: { ...resource, id } as R, logIds: uniqueSorted(logIds), recorded: fhirInstant(recorded) ?? recorded };
}

export const patientFullUrl = (patientId: string): string => `urn:uuid:${stableUuid(patientId, "Patient")}`;
export const patientRef = (patientId: string): Reference<Patient> => ({ reference: patientFullUrl(patientId) });

export function uniqueSorted(xs: readonly string[]): string[] {
  return [...new Set(xs)].sort();
}

/**
 * A date or datetime as FHIR's dateTime takes it: a year, month or date as sent; a
 * datetime with an offset gets seconds when it has none; one without an offset is its date.
 * Anything else is undefined.
 */
export function fhirDateTime(v: string | null | undefined): string | undefined {
  if (!v) return undefined;
  if (/^\d{4}(-\d{2}(-\d{2})?)?$/.test(v)) return v;
  // A datetime without an offset (kept as sent) is not a FHIR dateTime: its date is.
  return fhirInstant(v) ?? /^\d{4}-\d{2}-\d{2}/.exec(v)?.[0];
}

/** A datetime with an offset as FHIR's instant takes it (seconds added when missing); a date alone is its UTC midnight. */
export function fhirInstant(v: string | null | undefined): string | undefined {
  if (!v) return undefined;
  if (/^\d{4}-\d{2}-\d{2}$/.test(v)) return `${v}T00:00:00Z`;
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.exec(v);
  return m ? `${m[1]}${m[2] ?? ":00"}${m[4]}` : undefined;
}

/** A concept from codings (those with a code) and a text; undefined when it has neither. */
export function concept(codings: (Coding | undefined | false | null)[], text?: string | null): CodeableConcept | undefined {
  const coding = codings.filter((c): c is Coding => Boolean(c && c.code));
  if (coding.length === 0 && !text) return undefined;
  return { ...(coding.length > 0 ? { coding } : {}), ...(text ? { text } : {}) };
}

export const textConcept = (text: string | null | undefined): CodeableConcept | undefined => (text ? { text } : undefined);

/** A coding of a FHIR code system (status, category) by its code. */
export const fhirCode = (system: string, code: string, display?: string): CodeableConcept => ({ coding: [{ system, code, ...(display ? { display } : {}) }] });

/**
 * The verificationStatus FHIR in kept in an entry's extensions, as a coding of its value
 * set; none when none was kept, or entered-in-error (such an entry is withdrawn).
 */
export function verificationOf(extensions: Readonly<Record<string, unknown>>, set: StatusCodes): CodeableConcept | undefined {
  const code = extensions[EXTENSION_KEYS.verificationStatus];
  return typeof code === "string" && code !== "entered-in-error" && set.codes.includes(code) && set.system ? fhirCode(set.system, code) : undefined;
}

export const loinc = (code: string, display?: string): Coding => ({ system: SYSTEMS.loinc, code, ...(display ? { display } : {}) });

/** XHTML text escaped for a narrative's div. */
export function escapeXml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** A generated narrative: one paragraph, or a list of items. */
export function narrative(lines: readonly string[]): Narrative {
  const body = lines.length === 1 ? `<p>${escapeXml(lines[0]!)}</p>` : `<ul>${lines.map((l) => `<li>${escapeXml(l)}</li>`).join("")}</ul>`;
  return { status: "generated", div: `<div xmlns="http://www.w3.org/1999/xhtml">${body}</div>` };
}

/** Drops undefined members, so resources hold only the elements they have (FHIR has no nulls). */
export function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0))) as T;
}

/** A clinician as the catalog sends one ({name, npi}) or a name: a display reference with the NPI. */
export function clinicianRef(v: unknown): Reference<Practitioner> | undefined {
  if (typeof v === "string" && v.trim()) return { display: v.trim() };
  if (typeof v !== "object" || v === null) return undefined;
  const o = v as Record<string, unknown>;
  const name = typeof o.name === "string" ? o.name : undefined;
  const npi = typeof o.npi === "string" ? o.npi : undefined;
  if (!name && !npi) return undefined;
  return { ...(name ? { display: name } : {}), ...(npi ? { identifier: { system: "http://hl7.org/fhir/sid/us-npi", value: npi } } : {}) };
}

/** A details field (open entries keep unnamed fields there) as text. */
export const detailText = (details: Record<string, unknown>, key: string): string | undefined => {
  const v = details[key];
  return typeof v === "string" && v.trim() ? v.trim() : typeof v === "number" ? String(v) : undefined;
};
