import type { CodeableConcept, Dosage, Reference, Timing } from "@medplum/fhirtypes";
import { clinicalDate, codingIn, conceptText, dateOf, SYSTEMS } from "../lib/datatypes.js";
import { versionTime } from "../lib/versions.js";
import type { DerivedLog, MapContext, MapIssue, Resource } from "../types.js";

const NDC = "http://hl7.org/fhir/sid/ndc";

/** A medication as the catalog names it: rxnorm_cui (its identity), else medication_name. */
export interface MedicationIdentity {
  rxnorm_cui?: string;
  medication_name?: string;
  ndc_code?: string;
  form?: string;
}

/** What a person would call it: the concept's text or a display, never a bare code (which would read as a name). */
const nameOf = (cc: CodeableConcept | undefined) => cc?.text?.trim() || cc?.coding?.find((c) => c.display?.trim())?.display?.trim();

function fromConcept(cc: CodeableConcept | undefined): MedicationIdentity {
  const out: MedicationIdentity = {};
  const rxnorm = codingIn(cc, SYSTEMS.rxnorm)?.code;
  if (rxnorm) out.rxnorm_cui = rxnorm;
  const name = nameOf(cc);
  if (name) out.medication_name = name;
  const ndc = codingIn(cc, NDC)?.code;
  if (ndc) out.ndc_code = ndc;
  return out;
}

/**
 * The medication of a request, statement or administration: its medicationCodeableConcept,
 * or the Medication its medicationReference names (contained or in the same Bundle), else
 * that reference's display. Without an RxNorm code or a name it is a located error.
 */
export function medicationOf(
  r: { medicationCodeableConcept?: CodeableConcept; medicationReference?: Reference },
  ctx: MapContext,
): { ok: true; identity: MedicationIdentity } | { ok: false; issue: MapIssue } {
  const named = (identity: MedicationIdentity, path: (string | number)[], what: string) =>
    identity.rxnorm_cui || identity.medication_name
      ? { ok: true as const, identity }
      : { ok: false as const, issue: { path, message: `${what} does not name the medication: give it an RxNorm coding or text (or a display)` } };
  if (!r.medicationReference) return named(fromConcept(r.medicationCodeableConcept), ["medicationCodeableConcept"], "the concept");
  const ref = r.medicationReference.reference;
  const med = ref ? ctx.resolve(ref) : undefined;
  if (med?.resourceType === "Medication") {
    const form = conceptText(med.form);
    return named({ ...fromConcept(med.code), ...(form ? { form } : {}) }, ["medicationReference"], `the Medication ${ref}`);
  }
  if (r.medicationReference.display) return { ok: true, identity: { medication_name: r.medicationReference.display } };
  const message = `${ref ?? "a reference without a literal reference"} names no Medication contained (#id) or in the same Bundle, and has no display: contain the Medication, send it in the same Bundle, or use medicationCodeableConcept`;
  return { ok: false, issue: { path: ["medicationReference", "reference"], message } };
}

/** Once-to-four-times daily by the abbreviations prescriptions use. */
const DAILY: Readonly<Record<number, string>> = { 1: "QD", 2: "BID", 3: "TID", 4: "QID" };
const UNIT_WORD: Readonly<Record<string, string>> = { s: "second", min: "minute", h: "hour", d: "day", wk: "week", mo: "month", a: "year" };

/** A timing as the catalog's frequency text (QD, BID, Q8H, once weekly, 3 times per 2 weeks), else undefined. */
export function frequencyOf(t: Timing | undefined): string | undefined {
  const code = t?.code?.coding?.find((c) => c.code)?.code ?? t?.code?.text;
  if (code) return code;
  const rep = t?.repeat;
  if (!rep?.periodUnit || rep.period === undefined) return undefined;
  const f = rep.frequency ?? 1;
  const p = rep.period;
  const word = UNIT_WORD[rep.periodUnit] ?? rep.periodUnit;
  if (p === 1 && rep.periodUnit === "d" && DAILY[f]) return DAILY[f];
  if (f === 1 && rep.periodUnit === "h") return `Q${p}H`;
  if (f === 1) return p === 1 ? `once ${word === "day" ? "daily" : `${word}ly`}` : `every ${p} ${word}s`;
  return `${f} times per ${p === 1 ? word : `${p} ${word}s`}`;
}

/** The catalog's medication entry fields a FHIR Dosage fills. */
export function dosageOf(d: Dosage | undefined): Record<string, unknown> {
  if (!d) return {};
  const out: Record<string, unknown> = {};
  const rate = d.doseAndRate?.find((x) => x.doseQuantity ?? x.doseRange);
  const q = rate?.doseQuantity;
  const range = rate?.doseRange;
  const unit = q?.unit ?? q?.code ?? range?.low?.unit ?? range?.high?.unit;
  if (q?.value !== undefined) out.dose = unit ? `${q.value} ${unit}` : String(q.value);
  else if (range?.low?.value !== undefined && range.high?.value !== undefined) out.dose = `${range.low.value}-${range.high.value}${unit ? ` ${unit}` : ""}`;
  if (out.dose !== undefined && unit) out.dose_unit = unit;
  const frequency = frequencyOf(d.timing) ?? (d.asNeededBoolean || d.asNeededCodeableConcept ? "as needed" : undefined);
  if (frequency) out.frequency = frequency;
  const route = conceptText(d.route);
  if (route) out.route = route;
  // Daily times HH:MM: what turns adherence tracking on for the medication.
  const times = (d.timing?.repeat?.timeOfDay ?? []).map((t) => t.slice(0, 5));
  if (times.length > 0) out.schedule_times = times;
  const start = dateOf(d.timing?.repeat?.boundsPeriod?.start);
  if (start) out.start_date = start;
  if (d.text) out.extensions = { dosage_text: d.text };
  return out;
}

export type ListAction = "add" | "delete";

/**
 * One medication_list_update entry at `timestamp` (listUpdateAt). A delete carries the
 * identity alone (what the catalog needs to remove it); an add carries the dosage too, and
 * `extra` (start date, prescriber).
 */
export function listUpdate(
  action: ListAction, identity: MedicationIdentity, dosage: Dosage | undefined, extra: Record<string, unknown>, timestamp: string | undefined,
): DerivedLog {
  const entry = action === "delete" ? { action, ...identity } : { action, ...identity, ...extra, ...dosageOf(dosage) };
  return { log_type: "medication_list_update", ...(timestamp ? { timestamp } : {}), payload: { medications: [entry] } };
}

/**
 * When a request's or statement's list update happened, so that an older version
 * delivered after a newer one does not undo it (versionTime): an add at the resource's
 * clinical date (authoredOn, effective start); a removal at `ended`, the date the resource
 * gives for the end, else at the version's meta.lastUpdated, else at the clinical date
 * (where two versions tie and the one accepted last wins).
 */
export function listUpdateAt(action: ListAction, resource: Resource, ended?: string): string | undefined {
  return versionTime(action === "add" ? "holds" : "ended", { since: [clinicalDate(resource)], ended, lastUpdated: resource.meta?.lastUpdated });
}

/** The located refusal of a status that has no list action, naming those that have. */
export const statusIssue = (status: string, actions: Readonly<Record<string, ListAction>>): MapIssue => ({
  path: ["status"],
  message: `is ${status}, which says neither that the medication is taken nor that it stopped: mapped statuses are ${Object.entries(actions).map(([s, a]) => `${s} (${a})`).join(", ")}`,
});
