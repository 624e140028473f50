/**
 * What changed for a patient between two times, by clinical domain: the state folded to
 * the window's start compared with the state at its end, and the logs in between. Pure:
 * the caller folds both states (readmodels/as-of.ts) and passes the window's logs.
 */
import type { LogRecord } from "../log-record.js";
import type { PatientState } from "../patient-state.js";
import type { Finding } from "../findings.js";
import type { Instrument } from "../modules/questionnaires/index.js";
import { calendarDate, doc } from "../views/lib.js";
import { significant, worsened } from "../views/questionnaire.js";
import { labChanges } from "./labs.js";
import { medicationChanges } from "./medications.js";
import { symptomChanges } from "./symptoms.js";
import { foldedAlone, readingsOutOfRange } from "./window-logs.js";
import { inWindow, newestFirst, type ChangeItem, type ChangeWindow, type ClinicalChanges } from "./types.js";

export { inWindow, type ChangeItem, type ChangeWindow, type ClinicalChanges } from "./types.js";

const outOfRange = (findings: Finding[]): ChangeItem[] => findings.map((f) => ({ kind: "out_of_range", what: f.line, at: f.timestamp, log_ids: f.log_ids }));

const score = (i: Instrument["latest"]) => `${i.total_score ?? "?"}${i.total_score_max !== null ? `/${i.total_score_max}` : ""}${i.severity_category ? ` (${i.severity_category})` : ""}`;

/** Administrations in the window that are clinically significant, worsened or past the MID, against the one before the window. */
function questionnaireChanges(before: PatientState, after: PatientState, w: ChangeWindow): ChangeItem[] {
  const start = new Map((doc(before, "questionnaires")?.instruments ?? []).map((i) => [i.instrument_id.toLowerCase(), i]));
  return (doc(after, "questionnaires")?.instruments ?? []).flatMap((i) => {
    if (!inWindow(i.latest.timestamp, w)) return [];
    const mid = i.change?.exceeds_mid === true;
    if (!significant(i) && !worsened(i) && !mid) return [];
    const was = start.get(i.instrument_id.toLowerCase())?.latest;
    const why = [significant(i) && "clinically significant", worsened(i) && "worsened", mid && "change beyond the minimally important difference"].filter(Boolean).join(", ");
    return [{
      kind: worsened(i) ? "worsened" : significant(i) ? "significant" : "changed",
      what: `${i.instrument_id}: ${was ? `${score(was)} on ${was.timestamp.slice(0, 10)} → ` : ""}${score(i.latest)}; ${why}`,
      at: i.latest.timestamp,
      log_ids: [i.latest.log_id, ...(was ? [was.log_id] : [])],
      ...(was ? { before: was } : {}),
      after: i.latest,
    }];
  });
}

const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : null);

/** Encounters held, notes written and plan items set in the window. */
function encounterChanges(after: PatientState, w: ChangeWindow): ChangeItem[] {
  const cc = doc(after, "clinical_context");
  if (!cc) return [];
  const tz = after.timezone;
  const encounters = cc.encounters.filter((e) => inWindow(e.timestamp, w)).map((e) => ({
    kind: "encounter",
    what: `Encounter ${calendarDate(text((e.period as { start?: unknown } | undefined)?.start) ?? e.timestamp, tz)}: ${[text(e.encounter_type), text(e.status), text(e.reason) && `reason: ${text(e.reason)}`].filter(Boolean).join(", ")}`,
    at: e.timestamp,
    log_ids: [e.log_id],
  }));
  const notes = cc.notes.filter((n) => inWindow(n.timestamp, w)).map((n) => ({
    kind: "note",
    what: `Note${n.note_type ? ` (${n.note_type})` : ""}: ${n.sections.map((s) => `${s.section_label}: ${s.content.slice(0, 300)}`).join(" | ").slice(0, 900)}`,
    at: n.timestamp,
    log_ids: [n.log_id],
  }));
  const plans = cc.plan_items.filter((p) => inWindow(p.timestamp, w)).map((p) => ({
    kind: "plan_item",
    what: `Plan: ${text(p.description) ?? "?"} (${[text(p.item_type), text(p.status), text(p.scheduled_date) && `scheduled ${calendarDate(text(p.scheduled_date), tz)}`].filter(Boolean).join(", ")})`,
    at: p.timestamp,
    log_ids: [p.log_id],
  }));
  return [...encounters, ...notes, ...plans];
}

/** Every domain's changes in the window, newest first within each. */
export function clinicalChanges(before: PatientState, after: PatientState, w: ChangeWindow, logs: readonly LogRecord[]): ClinicalChanges {
  const sorted = (items: ChangeItem[]) => items.sort(newestFirst);
  // Readings, dose reports and symptom reports from the logs, not the modules' bounded lists.
  const alone = foldedAlone(after, logs);
  const readings = readingsOutOfRange(alone);
  return {
    symptoms: sorted(symptomChanges(before, after, w, alone)),
    labs: sorted(labChanges(before, after, w)),
    medications: sorted(medicationChanges(before, after, w, logs, alone)),
    vitals: sorted(outOfRange(readings.vitals)),
    devices: sorted(outOfRange(readings.devices)),
    questionnaires: sorted(questionnaireChanges(before, after, w)),
    encounters: sorted(encounterChanges(after, w)),
  };
}

/** "2 symptoms, 1 lab, 3 medications" or "nothing": what the answer holds, to say first. */
export function changesSummary(c: ClinicalChanges): string {
  const parts = Object.entries(c).filter(([, v]) => (v as unknown[]).length > 0).map(([k, v]) => `${k} ${(v as unknown[]).length}`);
  return parts.length ? `changes by domain: ${parts.join(", ")}` : "no clinically relevant change in this window";
}
