import type { MedicationAdministration } from "@medplum/fhirtypes";
import { conceptText, effectiveOf } from "../lib/datatypes.js";
import { unmappable, type Mapper } from "../types.js";
import { medicationOf } from "./medication.js";

/**
 * FHIR medication-admin-status → medication_adherence's status: completed and in-progress
 * doses were taken, not-done was skipped. On hold, stopped (part of a dose), entered in
 * error and unknown have no place: the catalog keeps taken or skipped doses, with no retraction.
 */
export const ADMINISTRATION_STATUS: Readonly<Record<string, "taken" | "skipped">> = {
  completed: "taken", "in-progress": "taken", "not-done": "skipped",
};

/**
 * MedicationAdministration → medication_adherence: one dose, taken or skipped, at its
 * effective time (the log's timestamp), with the dose given; a skipped dose keeps its
 * statusReason in the entry's extensions (`reason_not_taken`).
 */
export const mapMedicationAdministration: Mapper<MedicationAdministration> = (a, ctx) => {
  const status = ADMINISTRATION_STATUS[a.status];
  if (!status) {
    const mapped = Object.entries(ADMINISTRATION_STATUS).map(([s, v]) => `${s} (${v})`).join(", ");
    return unmappable(["status"], `is ${a.status}: a dose is kept as taken or skipped; mapped statuses are ${mapped}`);
  }
  const med = medicationOf(a, ctx);
  if (!med.ok) return { ok: false, issues: [med.issue] };
  const { form: _form, ...identity } = med.identity;
  const entry: Record<string, unknown> = { status, ...identity };
  const dose = a.dosage?.dose;
  if (dose?.value !== undefined && dose.value >= 0) entry.dose_amount = dose.value;
  const unit = dose?.unit ?? dose?.code;
  if (entry.dose_amount !== undefined && unit) entry.dose_unit = unit;
  const reason = (a.statusReason ?? []).map(conceptText).filter(Boolean).join("; ");
  if (status === "skipped" && reason) entry.extensions = { reason_not_taken: reason };
  const at = effectiveOf(a);
  return { ok: true, logs: [{ log_type: "medication_adherence", ...(at ? { timestamp: at } : {}), payload: { medication_adherence: [entry] } }] };
};
