import type { CodeableConcept } from "@medplum/fhirtypes";
import type { MapIssue } from "../types.js";

/**
 * The R4 codes of status elements whose binding is required but which a mapper reads
 * leniently (a table lookup, or a CodeableConcept). The R4 validator checks a code's
 * pattern, not its value set, so without this check a code outside the set read as "no
 * status": a Condition with clinicalStatus `bogus` was stored as active.
 */
export interface StatusCodes {
  /** The code system of a CodeableConcept status; a `code` element has none. */
  system?: string;
  codes: readonly string[];
}

const TERMINOLOGY = "http://terminology.hl7.org/CodeSystem";

export const CONDITION_CLINICAL: StatusCodes = {
  system: `${TERMINOLOGY}/condition-clinical`, codes: ["active", "recurrence", "relapse", "inactive", "remission", "resolved"],
};
export const CONDITION_VERIFICATION: StatusCodes = {
  system: `${TERMINOLOGY}/condition-ver-status`, codes: ["unconfirmed", "provisional", "differential", "confirmed", "refuted", "entered-in-error"],
};
export const ALLERGY_CLINICAL: StatusCodes = { system: `${TERMINOLOGY}/allergyintolerance-clinical`, codes: ["active", "inactive", "resolved"] };
export const ALLERGY_VERIFICATION: StatusCodes = {
  system: `${TERMINOLOGY}/allergyintolerance-verification`, codes: ["unconfirmed", "confirmed", "refuted", "entered-in-error"],
};
export const ALLERGY_CRITICALITY: StatusCodes = { codes: ["low", "high", "unable-to-assess"] };
export const CARE_TEAM_STATUS: StatusCodes = { codes: ["proposed", "active", "suspended", "inactive", "entered-in-error"] };
export const CARE_PLAN_STATUS: StatusCodes = { codes: ["draft", "active", "on-hold", "revoked", "completed", "entered-in-error", "unknown"] };
export const CARE_PLAN_ACTIVITY_STATUS: StatusCodes = {
  codes: ["not-started", "scheduled", "in-progress", "on-hold", "completed", "cancelled", "stopped", "unknown", "entered-in-error"],
};
export const HISTORY_STATUS: StatusCodes = { codes: ["partial", "completed", "entered-in-error", "health-unknown"] };
export const DOCUMENT_REFERENCE_STATUS: StatusCodes = { codes: ["current", "superseded", "entered-in-error"] };

/** A status as read: its code (undefined when none was sent), or the located reason it cannot be read. */
export type CheckedStatus = { ok: true; code: string | undefined } | { ok: false; issue: MapIssue };

const outside = (value: string, set: StatusCodes, path: (string | number)[]): CheckedStatus => ({
  ok: false,
  issue: { path, message: `${value} is not a code of its R4 value set: send one of ${set.codes.join(", ")}` },
});

/** A `code` status element (CareTeam.status): one of its value set's codes, or absent. */
export function checkCode(value: string | undefined, set: StatusCodes, path: (string | number)[]): CheckedStatus {
  if (value === undefined || set.codes.includes(value)) return { ok: true, code: value };
  return outside(value, set, path);
}

/**
 * A CodeableConcept status (Condition.clinicalStatus): the code of its coding in the value
 * set's system, else of a coding sent without a system (taken as meaning it). A concept
 * with no such coding (text only, or only another system's codes) is refused too: the
 * binding is required, and reading it as absent would change what the state says.
 */
export function checkConcept(cc: CodeableConcept | undefined, set: StatusCodes, path: (string | number)[]): CheckedStatus {
  if (cc === undefined) return { ok: true, code: undefined };
  const codings = cc.coding ?? [];
  let i = codings.findIndex((c) => c.code !== undefined && c.system === set.system);
  if (i < 0) i = codings.findIndex((c) => c.code !== undefined && c.system === undefined);
  if (i < 0) return { ok: false, issue: { path, message: `needs a coding of ${set.system}: one of ${set.codes.join(", ")}` } };
  return checkCode(codings[i]!.code, set, [...path, "coding", i, "code"]);
}
