import type { Observation, Organization, Reference, Specimen } from "@medplum/fhirtypes";
import { codingIn, conceptText, quantityOf, SYSTEMS } from "../lib/datatypes.js";
import type { MapContext, MapIssue } from "../types.js";
import { rangeFieldsOf } from "./reference-range.js";

type Path = (string | number)[];
type Flag = "H" | "L" | "N" | "HH" | "LL";

/**
 * FHIR observation-status → the catalog's result_status, which has no amended: an amended
 * result changes one that was released, which the catalog calls corrected. The others
 * (registered, cancelled, entered-in-error, unknown) carry no result the catalog can keep.
 */
export const RESULT_STATUS: Readonly<Record<string, "final" | "preliminary" | "corrected">> = {
  final: "final", preliminary: "preliminary", amended: "corrected", corrected: "corrected",
};

/**
 * How a wrong value is put right, for each log an Observation can become: none of them can
 * record entered-in-error (lab_results' result_status is final, preliminary or corrected;
 * vitals_measurement, cgm_reading and social_determinants have no status), so nothing can be
 * withdrawn, but a lab result or a vital sent again for the same draw replaces the earlier one.
 */
export const PUT_RIGHT = {
  lab: "To fix a wrong value, send the right result for the same test and effective time with status corrected: it replaces the wrong one",
  vital: "To fix a wrong value, send the right measurement for the same code and effective time with status corrected: it replaces the wrong one",
  glucose: "A device glucose reading is kept as sent: one sent again for the same time is another reading",
  social: "To fix a wrong answer, send the right one: the latest answer is the one kept",
} as const;

/**
 * v3 ObservationInterpretation → abnormal_flag. Significantly high or low (HU, LU) is not
 * critical; A and AA say abnormal without a direction, which the flag cannot hold, so the
 * reference range judges those results.
 */
const INTERPRETATION: Readonly<Record<string, Flag>> = { H: "H", HU: "H", L: "L", LU: "L", N: "N", HH: "HH", LL: "LL" };

/** The observation's status as result_status, or the located reason it has no result (`fix`: how to put a wrong value right, a sentence). */
export function resultStatus(o: Pick<Observation, "status">, path: Path, fix: string): { status: "final" | "preliminary" | "corrected" } | { issue: MapIssue } {
  const status = RESULT_STATUS[o.status];
  if (status) return { status };
  const mapped = Object.keys(RESULT_STATUS).join(", ");
  const message = o.status === "entered-in-error"
    ? `is entered-in-error, which the patient's logs cannot record: nothing was stored or removed. ${fix}; ` +
      "a result that should not have been sent at all cannot be withdrawn"
    : `is ${o.status}: only results with status ${mapped} are kept`;
  return { issue: { path: [...path, "status"], message } };
}

/** The first interpretation code the catalog has a flag for. */
export function flagOf(interpretation: Observation["interpretation"]): Flag | undefined {
  for (const cc of interpretation ?? []) for (const c of cc.coding ?? []) if (c.code && INTERPRETATION[c.code]) return INTERPRETATION[c.code];
  return undefined;
}

type Value = { value_numeric: number; unit: string } | { value_string: string; unit: string };

/** A result's value: numbers with their unit; text, codes and booleans as text (unit "", as the catalog's qualitative results). */
function valueOf(o: Observation, path: Path): Value | MapIssue {
  const q = quantityOf(o.valueQuantity);
  // "<0.1" is not the number 0.1: a bounded result is kept as its text.
  if (q && o.valueQuantity?.comparator) return { value_string: `${o.valueQuantity.comparator}${q.value}`, unit: q.unit ?? "" };
  if (q) return { value_numeric: q.value, unit: q.unit ?? "" };
  if (o.valueInteger !== undefined) return { value_numeric: o.valueInteger, unit: "" };
  const text = o.valueString ?? conceptText(o.valueCodeableConcept) ?? (o.valueBoolean === undefined ? undefined : String(o.valueBoolean));
  if (text !== undefined) return { value_string: text, unit: "" };
  if (o.dataAbsentReason) {
    return { path: [...path, "dataAbsentReason"], message: `says the result is absent (${conceptText(o.dataAbsentReason)}): only results with a value are kept` };
  }
  const sent = Object.keys(o).find((k) => k.startsWith("value"));
  if (sent) return { path: [...path, sent], message: "is not kept: send the result as valueQuantity, valueInteger, valueString, valueCodeableConcept or valueBoolean" };
  return { path: [...path, "value[x]"], message: "is required: a result needs its value (valueQuantity, valueString, valueCodeableConcept…)" };
}

/** The name of a contained or same-Bundle resource a reference points to, else its display. */
function named<R extends Specimen | Organization>(ref: Reference | undefined, ctx: MapContext, name: (r: R) => string | undefined): string | undefined {
  const found = ref?.reference ? (ctx.resolve(ref.reference) as R | undefined) : undefined;
  return (found ? name(found) : undefined) ?? ref?.display;
}

export const specimenOf = (o: Observation, ctx: MapContext) => named<Specimen>(o.specimen, ctx, (s) => conceptText(s.type));

/** The performing laboratory: the first performer that is an Organization (resolved for its name), else none. */
export function performingLab(performers: Reference[] | undefined, ctx: MapContext): { name: string } | undefined {
  for (const p of performers ?? []) {
    const found = p.reference ? ctx.resolve(p.reference) : undefined;
    if (found?.resourceType === "Organization" && found.name) return { name: found.name };
    if (!found && p.display && (p.type === "Organization" || p.reference?.startsWith("Organization/"))) return { name: p.display };
  }
  return undefined;
}

/** One Observation as one entry of lab_results' `results`, or where it cannot be one. */
export function labResultOf(o: Observation, path: Path, ctx: MapContext): { ok: true; result: Record<string, unknown> } | { ok: false; issue: MapIssue } {
  const status = resultStatus(o, path, PUT_RIGHT.lab);
  if ("issue" in status) return { ok: false, issue: status.issue };
  const loinc = codingIn(o.code, SYSTEMS.loinc)?.code;
  const name = conceptText(o.code);
  if (!loinc && !name) return { ok: false, issue: { path: [...path, "code"], message: "is required: a LOINC coding or text naming the test" } };
  const value = valueOf(o, path);
  if ("path" in value) return { ok: false, issue: value };
  const result: Record<string, unknown> = { ...(loinc ? { loinc_code: loinc } : {}), ...(name ? { test_name: name } : {}), ...value };
  const specimen = specimenOf(o, ctx);
  if (specimen) result.specimen_type = specimen;
  const flag = flagOf(o.interpretation);
  if (flag) result.abnormal_flag = flag;
  const range = rangeFieldsOf(o, path, ctx);
  if ("path" in range) return { ok: false, issue: range };
  Object.assign(result, range);
  result.result_status = status.status;
  return { ok: true, result };
}
