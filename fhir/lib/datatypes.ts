import { createHash } from "node:crypto";
import type { CodeableConcept, Coding, HumanName, Period, Quantity, Reference } from "@medplum/fhirtypes";
import type { Resource } from "../types.js";
import { canonicalJson } from "../../readmodels/state-diff.js";

/** Code systems by the names the catalog's payloads use. */
export const SYSTEMS = {
  loinc: "http://loinc.org",
  snomed: "http://snomed.info/sct",
  icd10: "http://hl7.org/fhir/sid/icd-10",
  icd10cm: "http://hl7.org/fhir/sid/icd-10-cm",
  rxnorm: "http://www.nlm.nih.gov/research/umls/rxnorm",
  cvx: "http://hl7.org/fhir/sid/cvx",
  ucum: "http://unitsofmeasure.org",
} as const;

/** Code systems by the names the catalog's `code_system` fields use (CPT, SNOMED, LOINC, ICD-10-PCS). */
const CODE_SYSTEM_NAMES: Readonly<Record<string, string>> = {
  [SYSTEMS.snomed]: "SNOMED", "http://www.ama-assn.org/go/cpt": "CPT", [SYSTEMS.loinc]: "LOINC", "http://www.cms.gov/Medicare/Coding/ICD10": "ICD-10-PCS",
};

/** A concept's first code in a system the catalog names, with that name: `{code, code_system}` as the catalog's coded fields take them. */
export function namedCode(cc: CodeableConcept | undefined): { code: string; code_system: string } | undefined {
  const c = cc?.coding?.find((x) => x.code && x.system && CODE_SYSTEM_NAMES[x.system]);
  return c ? { code: c.code!, code_system: CODE_SYSTEM_NAMES[c.system!]! } : undefined;
}

/** The first coding of a concept in one of `systems` (terminology is by code as sent: no lookups). */
export function codingIn(cc: CodeableConcept | undefined, ...systems: string[]): Coding | undefined {
  return cc?.coding?.find((c) => c.system !== undefined && systems.includes(c.system) && c.code !== undefined);
}

/** Every coding's code in one of `systems`, in the order sent, without repeats. */
export function codesIn(cc: CodeableConcept | undefined, ...systems: string[]): string[] {
  const out: string[] = [];
  for (const c of cc?.coding ?? []) if (c.system && systems.includes(c.system) && c.code && !out.includes(c.code)) out.push(c.code);
  return out;
}

/** What a person would call the concept: its text, else the first display, else the first code. */
export function conceptText(cc: CodeableConcept | undefined): string | undefined {
  if (!cc) return undefined;
  if (cc.text?.trim()) return cc.text.trim();
  const shown = cc.coding?.find((c) => c.display?.trim());
  if (shown) return shown.display!.trim();
  return cc.coding?.find((c) => c.code)?.code;
}

/** A concept's first code from a FHIR value set (status, category): the code alone. */
export function codeOf(cc: CodeableConcept | undefined): string | undefined {
  return cc?.coding?.find((c) => c.code)?.code;
}

/**
 * A FHIR date, dateTime or instant as the catalog's timestamps take it: a date alone is
 * its midnight UTC, a dateTime without seconds gets them. Partial dates (a year, a month)
 * are their first day. Anything else is undefined (the caller reports it or leaves it out).
 */
export function instantOf(value: string | undefined): string | undefined {
  if (!value) return undefined;
  if (/^\d{4}$/.test(value)) return `${value}-01-01T00:00:00Z`;
  if (/^\d{4}-\d{2}$/.test(value)) return `${value}-01T00:00:00Z`;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return `${value}T00:00:00Z`;
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.exec(value);
  if (!m) return undefined;
  return `${m[1]}${m[2] ?? ":00"}${m[4]}`;
}

/** The calendar date (YYYY-MM-DD) of a FHIR date or dateTime, as sent (no zone shift). */
export function dateOf(value: string | undefined): string | undefined {
  const m = value ? /^(\d{4})(-\d{2})?(-\d{2})?/.exec(value) : null;
  if (!m) return undefined;
  return `${m[1]}${m[2] ?? "-01"}${m[3] ?? "-01"}`;
}

/**
 * A FHIR date or dateTime for the catalog's date-or-datetime fields: a date stays a date
 * (a partial one is its first day), a dateTime becomes an instant.
 */
export function dateOrInstant(value: string | undefined): string | undefined {
  return value?.includes("T") ? instantOf(value) : dateOf(value);
}

export function periodStart(p: Period | undefined): string | undefined {
  return instantOf(p?.start);
}

/** A quantity's value and unit (its unit text, else its UCUM code). */
export function quantityOf(q: Quantity | undefined): { value: number; unit?: string } | undefined {
  if (q?.value === undefined) return undefined;
  const unit = q.unit ?? q.code;
  return unit === undefined ? { value: q.value } : { value: q.value, unit };
}

/** `Type/id` of a reference, or its display when it has no literal reference. */
export function referenceText(r: Reference | undefined): string | undefined {
  return r?.display ?? r?.reference;
}

/** The id part of a literal reference `Type/id` of the wanted type. */
export function referencedId(r: Reference | undefined, type: string): string | undefined {
  const m = r?.reference ? /^([A-Za-z]+)\/([A-Za-z0-9\-.]{1,64})$/.exec(r.reference) : null;
  return m && m[1] === type ? m[2] : undefined;
}

/**
 * The resource's clinical date, the first of the usual elements it has (onset, recorded,
 * authored, effective, occurrence, performed, period, issued, date), as an instant.
 */
export function clinicalDate(resource: Resource): string | undefined {
  const r = resource as unknown as Record<string, unknown>;
  const candidates = [
    r.onsetDateTime, r.recordedDate, r.authoredOn, r.effectiveDateTime, (r.effectivePeriod as Period | undefined)?.start,
    r.effectiveInstant, r.occurrenceDateTime, r.performedDateTime, (r.performedPeriod as Period | undefined)?.start,
    (r.period as Period | undefined)?.start, r.start, r.issued, r.date, r.created, r.dateAsserted, r.authored, r.recorded,
  ];
  for (const c of candidates) {
    const at = typeof c === "string" ? instantOf(c) : undefined;
    if (at) return at;
  }
  return undefined;
}

/** The name a person goes by: the official name, else the usual, else the first not marked old. */
export function currentName(names: HumanName[] | undefined): HumanName | undefined {
  const current = names?.filter((n) => n.use !== "old") ?? [];
  return current.find((x) => x.use === "official") ?? current.find((x) => x.use === "usual") ?? current[0];
}

/** The name a person goes by: the official name, else the usual, else the first not marked old; its text, else given names and family. */
export function humanName(names: HumanName[] | undefined): string | undefined {
  const n = currentName(names);
  if (!n) return undefined;
  if (n.text?.trim()) return n.text.trim();
  const parts = [...(n.given ?? []), n.family].filter((p): p is string => Boolean(p?.trim()));
  return parts.length > 0 ? parts.join(" ") : undefined;
}

/**
 * A resource's identity at its source, for the catalog's id fields: its id, else its first
 * identifier's value (a Bundle entry may carry only a business identifier), else its
 * content (`content-<digest>`, as the hosted product dedupes a resource sent without
 * one): the same resource sent again is the same item, though a later version of it,
 * having other content, cannot update it.
 */
export function resourceKey(resource: Resource): string {
  const identifiers = (resource as { identifier?: { value?: string }[] }).identifier;
  return resource.id ?? identifiers?.find((i) => i.value?.trim())?.value ?? contentId(resource);
}

/** A name for a resource from its content alone (`content-<digest>`): the same content, the same name. */
export function contentId(resource: Resource): string {
  return `content-${createHash("sha256").update(canonicalJson(resource)).digest("hex").slice(0, 32)}`;
}

/** A label as the catalog's client-defined values spell them: "Pathology report" → pathology_report. */
export function snakeCase(label: string | undefined): string | undefined {
  const s = label?.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "");
  return s || undefined;
}

/** The instant of an effective[x] (dateTime, instant, or a period's start): Observation, DiagnosticReport, MedicationAdministration… */
export function effectiveOf(r: { effectiveDateTime?: string; effectiveInstant?: string; effectivePeriod?: Period }): string | undefined {
  return instantOf(r.effectiveDateTime ?? r.effectiveInstant ?? r.effectivePeriod?.start);
}

/** The resource type a reference names: its `type`, else the type of a literal `Type/id`. */
export function referenceType(r: Reference | undefined): string | undefined {
  return r?.type ?? (r?.reference ? /^(?:.*\/)?([A-Z][A-Za-z]+)\/[^/]+$/.exec(r.reference)?.[1] : undefined);
}

/** Every code of a list of concepts (a resource's categories), in the order sent, whatever the system. */
export function codesOfAll(ccs: CodeableConcept[] | undefined): string[] {
  return (ccs ?? []).flatMap((cc) => (cc.coding ?? []).flatMap((c) => (c.code ? [c.code] : [])));
}
