import type { MedicationStatement } from "@medplum/fhirtypes";
import { dateOf } from "../lib/datatypes.js";
import type { Mapper } from "../types.js";
import { listUpdate, listUpdateAt, medicationOf, statusIssue, type ListAction } from "./medication.js";

/**
 * FHIR medication-statement-status → the medication list's action: active and on hold are
 * on the list; completed, stopped and not-taken are not taken now; entered-in-error takes
 * back a listing made in error. Intended (maybe later) and unknown say neither.
 */
export const STATEMENT_ACTION: Readonly<Record<string, ListAction>> = {
  active: "add", "on-hold": "add", completed: "delete", stopped: "delete", "not-taken": "delete", "entered-in-error": "delete",
};

/** Statuses whose effectivePeriod.end is when the patient stopped taking it. */
const STOPPED = new Set(["stopped", "completed"]);

/**
 * MedicationStatement → medication_list_update: what the patient takes (or stopped), with
 * its dosage and since when. A stop is dated at the period's end (the state as of any time
 * before it still lists the medication), else at the version's meta.lastUpdated.
 */
export const mapMedicationStatement: Mapper<MedicationStatement> = (s, ctx) => {
  const action = STATEMENT_ACTION[s.status];
  if (!action) return { ok: false, issues: [statusIssue(s.status, STATEMENT_ACTION)] };
  const med = medicationOf(s, ctx);
  if (!med.ok) return { ok: false, issues: [med.issue] };
  const start = dateOf(s.effectivePeriod?.start ?? s.effectiveDateTime);
  const ended = STOPPED.has(s.status) ? s.effectivePeriod?.end : undefined;
  return { ok: true, logs: [listUpdate(action, med.identity, s.dosage?.[0], start ? { start_date: start } : {}, listUpdateAt(action, s, ended))] };
};
