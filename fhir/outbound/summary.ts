import { createHash } from "node:crypto";
import type { Bundle, BundleEntry, CodeableConcept, Composition, CompositionSection, Resource } from "@medplum/fhirtypes";
import { allergyResources } from "./allergies.js";
import { conditionResources } from "./conditions.js";
import { immunizationResources } from "./immunizations.js";
import { labObservations } from "./labs.js";
import { fhirInstant, loinc, narrative, patientRef, SERVICE, stableUuid, type Mapped, type OutboundInput } from "./lib.js";
import { medicationResources } from "./medications.js";
import { patientResource } from "./patient.js";
import { procedureResources } from "./procedures.js";
import { provenances } from "./provenance.js";
import { vitalSignObservations } from "./vitals.js";

/** The International Patient Summary's sections this summary fills, by their LOINC codes. */
export const SECTIONS = [
  { key: "problems", code: "11450-4", title: "Problem list", display: "Problem list - Reported", build: conditionResources },
  { key: "allergies", code: "48765-2", title: "Allergies and intolerances", display: "Allergies and adverse reactions Document", build: allergyResources },
  { key: "medications", code: "10160-0", title: "Medication summary", display: "History of Medication use Narrative", build: medicationResources },
  { key: "immunizations", code: "11369-6", title: "Immunizations", display: "History of Immunization Narrative", build: immunizationResources },
  { key: "procedures", code: "47519-4", title: "History of procedures", display: "History of Procedures Document", build: procedureResources },
  { key: "results", code: "30954-2", title: "Results", display: "Relevant diagnostic tests/laboratory data Narrative", build: labObservations },
  { key: "vital_signs", code: "8716-3", title: "Vital signs", display: "Vital signs", build: vitalSignObservations },
] as const satisfies readonly { key: string; code: string; title: string; display: string; build: (i: OutboundInput) => Mapped[] }[];

export type SectionKey = (typeof SECTIONS)[number]["key"];

const EMPTY_REASON = "http://terminology.hl7.org/CodeSystem/list-empty-reason";
/** LOINC 60591-5: Patient summary Document. */
const SUMMARY_TYPE: CodeableConcept = { coding: [loinc("60591-5", "Patient summary Document")], text: "Patient summary" };

const conceptName = (c: CodeableConcept | undefined): string => c?.text ?? c?.coding?.find((x) => x.display)?.display ?? c?.coding?.[0]?.code ?? "unnamed";

/** One line per entry for a section's narrative: what it is, and its value or date. */
export function lineOf(r: Resource): string {
  const o = r as unknown as Record<string, unknown>;
  const name = conceptName((o.code ?? o.vaccineCode ?? o.medicationCodeableConcept) as CodeableConcept | undefined);
  if (r.resourceType === "Observation") {
    const obs = r;
    const q = (v: { value?: number; unit?: string } | undefined) => (v?.value === undefined ? "" : `${v.value}${v.unit ? ` ${v.unit}` : ""}`);
    const value = obs.component ? obs.component.map((c) => q(c.valueQuantity)).join(" / ") : obs.valueQuantity ? q(obs.valueQuantity) : (obs.valueString ?? "");
    return [name, value, obs.effectiveDateTime].filter(Boolean).join(", ");
  }
  const when = (o.onsetDateTime ?? o.occurrenceDateTime ?? o.performedDateTime ?? o.recordedDate) as string | undefined;
  return when ? `${name}, ${when}` : name;
}

function sectionOf(s: (typeof SECTIONS)[number], entries: readonly Mapped[]): CompositionSection {
  const code = { coding: [loinc(s.code, s.display)] };
  if (entries.length === 0) {
    // cmp-1: a section has text, entries or sections; cmp-2: emptyReason only when it has no entries.
    return {
      title: s.title, code, text: narrative([`No ${s.title.toLowerCase()} recorded in the patient's state.`]),
      emptyReason: { coding: [{ system: EMPTY_REASON, code: "unavailable", display: "Unavailable" }] },
    };
  }
  return { title: s.title, code, text: narrative(entries.map((e) => lineOf(e.resource))), entry: entries.map((e) => ({ reference: e.fullUrl })) };
}

export interface SummaryOptions {
  /** When the summary is assembled (Bundle.timestamp, Composition.date): the one value two reads of a state differ in. */
  now: string;
}

/** The resources of the summary by section, with the Patient (the input of summaryBundle and of searches). */
export function summaryResources(input: OutboundInput): { patient: Mapped; sections: Record<SectionKey, Mapped[]> } {
  const sections = Object.fromEntries(SECTIONS.map((s) => [s.key, s.build(input)])) as Record<SectionKey, Mapped[]>;
  return { patient: patientResource(input), sections };
}

const entryOf = (m: Mapped): BundleEntry => ({ fullUrl: m.fullUrl, resource: m.resource });

/**
 * The patient's compiled state as an International Patient Summary style document: a
 * Bundle of type document whose first entry is the Composition (one section per IPS
 * section, each referencing its entries by fullUrl, an empty one with emptyReason), then
 * the Patient, the sections' resources, and one Provenance per resource naming its logs.
 * Every fullUrl is derived from the patient and the entity, so two reads of the same state
 * give the same Bundle apart from `now`; the Bundle's identifier is a digest of its content.
 */
export function summaryBundle(input: OutboundInput, o: SummaryOptions): Bundle {
  const pid = input.patient.id;
  const { patient, sections } = summaryResources(input);
  const clinical = SECTIONS.flatMap((s) => sections[s.key]);
  const resources = [patient, ...clinical];
  const provs = provenances(pid, resources);
  const now = fhirInstant(o.now) ?? o.now;
  const compositionId = stableUuid(pid, "Composition");
  const composition: Composition = {
    resourceType: "Composition",
    id: compositionId,
    status: "final",
    type: SUMMARY_TYPE,
    subject: patientRef(pid),
    date: now,
    author: [SERVICE],
    title: "Patient summary",
    section: SECTIONS.map((s) => sectionOf(s, sections[s.key])),
  };
  const entry = [{ fullUrl: `urn:uuid:${compositionId}`, resource: composition }, ...[...resources, ...provs].map(entryOf)];
  const digest = createHash("sha1").update(JSON.stringify(entry.slice(1))).update(JSON.stringify(composition.section)).digest("hex");
  const id = stableUuid(pid, "Bundle", digest);
  return { resourceType: "Bundle", id, identifier: { system: "urn:ietf:rfc:3986", value: `urn:uuid:${id}` }, type: "document", timestamp: now, entry };
}
