import type { MedicationRequest } from "@medplum/fhirtypes";
import { dateOf } from "../lib/datatypes.js";
import type { Mapper } from "../types.js";
import { listUpdate, listUpdateAt, medicationOf, statusIssue, type ListAction } from "./medication.js";

/**
 * FHIR medicationrequest-status → the medication list's action. On hold is still
 * prescribed, so it stays listed; completed, stopped and cancelled leave the current list;
 * entered-in-error takes back a listing made in error. Draft and unknown say neither.
 */
export const REQUEST_ACTION: Readonly<Record<string, ListAction>> = {
  active: "add", "on-hold": "add", completed: "delete", stopped: "delete", cancelled: "delete", "entered-in-error": "delete",
};

/**
 * MedicationRequest → medication_list_update: the medication, its first dosage
 * instruction, when and by whom it was prescribed. A removal is dated at the version's
 * meta.lastUpdated, when the source recorded the stop: a request has no element saying
 * when it stopped (dispenseRequest.validityPeriod.end is when the prescription would have
 * lapsed, usually after it was stopped, and a dosage's bounds when it was meant to end).
 */
export const mapMedicationRequest: Mapper<MedicationRequest> = (r, ctx) => {
  const action = REQUEST_ACTION[r.status];
  if (!action) return { ok: false, issues: [statusIssue(r.status, REQUEST_ACTION)] };
  const med = medicationOf(r, ctx);
  if (!med.ok) return { ok: false, issues: [med.issue] };
  const extra: Record<string, unknown> = {};
  const start = dateOf(r.authoredOn);
  if (start) extra.start_date = start;
  if (r.requester?.display) extra.prescribed_by = { name: r.requester.display };
  return { ok: true, logs: [listUpdate(action, med.identity, r.dosageInstruction?.[0], extra, listUpdateAt(action, r))] };
};
