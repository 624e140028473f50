import { moduleEntry, type PatientState } from "../../../readmodels/patient-state.js";
import { doc, sourceIds } from "../../../readmodels/views/lib.js";
import type { Symptom } from "../../../readmodels/modules/symptoms/index.js";
import { isSevere } from "../../../readmodels/views/symptom.js";
import { findMissedDoses, labReferenceText, localClock, type Finding } from "../../../readmodels/findings.js";
import type { Dose } from "../../../readmodels/modules/adherence/index.js";
import { changeAt } from "../../../readmodels/modules/questionnaires/index.js";
import { currentValues } from "../../../readmodels/modules/lab_results/index.js";
import { changeText, priorOf, resultFlags, scoreText } from "../../../readmodels/views/questionnaire.js";

export { atOrAfter, deviceOutOfRange, LIMITS_TEXT, localClock, referenceText, VITAL_LIMITS, vitalsOutOfRange, type Finding } from "../../../readmodels/findings.js";

/** When the symptom's current run of severe reports began (its first severe report since a milder one). */
function severeSince(s: Symptom): string | null {
  let since: string | null = null;
  for (let i = s.history.length - 1; i >= 0; i--) {
    const r = s.history[i]!;
    if (!isSevere({ ...s, status: "active", current_score: r.score, instrument: r.instrument })) break;
    since = r.timestamp;
  }
  return since;
}

export function severeSymptoms(state: PatientState, since: string): { fresh: Finding[]; ongoing: Finding[] } {
  const fresh: Finding[] = [];
  const ongoing: Finding[] = [];
  for (const s of (doc(state, "symptoms")?.symptoms ?? []).filter(isSevere)) {
    const last = s.history[s.history.length - 1];
    const began = severeSince(s);
    if (!last || !began || last.timestamp < since) continue;
    const line = `${s.name}: score ${s.current_score} (${s.instrument})`;
    if (began >= since) fresh.push({ timestamp: last.timestamp, line: `${line}, severe since ${began}`, log_ids: [last.log_id] });
    else ongoing.push({ timestamp: last.timestamp, line: `${line}, severe since ${began} (before this window)`, log_ids: [last.log_id] });
  }
  return { fresh, ongoing };
}

/** Abnormal and critical lab values reported since `since` (a late result of an earlier draw included), as they stand: one replaced by a later result of its draw is not. */
export function abnormalLabs(state: PatientState, since: string): Finding[] {
  return (doc(state, "lab_results")?.results ?? []).flatMap((r) =>
    currentValues(r.history).map((c) => c.v).filter((v) => v.abnormal_flag !== null && v.abnormal_flag !== "N" && v.reported_at >= since).map((v) => ({
      timestamp: v.timestamp,
      line: `${r.test_name ?? r.loinc_code ?? "lab"}: ${v.value_numeric ?? v.value_string ?? "?"}${v.unit ? ` ${v.unit}` : ""} flag ${v.abnormal_flag}${
        v.abnormal_flag === "HH" || v.abnormal_flag === "LL" ? " (CRITICAL)" : ""}${labReferenceText(r, v)}`,
      log_ids: [v.log_id],
    })));
}

/**
 * Skipped doses, and scheduled doses not reported by `now` (the time of the read), citing
 * the medication listing. `reported`: the skips read from the window's logs (skippedDoses),
 * else those among the module's kept reports.
 */
export function missedDoses(state: PatientState, since: string, now: string, reported?: readonly Dose[]): Finding[] {
  const tz = state.timezone;
  const found = findMissedDoses(state, now, (t) => t >= since);
  const { unreported } = found;
  const skipped = reported ?? found.skipped;
  const missed: Finding[] = skipped.map((d) => ({
    timestamp: d.timestamp,
    line: `${d.medication_name ?? d.rxnorm_cui ?? "medication"}: dose skipped${d.scheduled_time ? ` (scheduled ${localClock(d.scheduled_time, tz)})` : ""}`,
    log_ids: [d.log_id],
  }));
  for (const { schedule: sch, doses, listing } of unreported) {
    const times = doses.map((d) => localClock(d.scheduled_time, tz));
    const name = sch.medication_name ?? sch.rxnorm_cui ?? "medication";
    const span = times.length === 1 ? `scheduled ${times[0]}` : `${times.length} scheduled doses, ${times[0]} to ${times[times.length - 1]}`;
    missed.push({ timestamp: doses.at(-1)!.scheduled_time, line: `${name}: not reported (${span})`, log_ids: sourceIds(listing) });
  }
  return missed;
}

/**
 * Questionnaire administrations at or after `since` that are clinically significant, were
 * classified worsened, or changed by at least the MID against the administration before
 * them (the questionnaire view's rule, resultFlags), each with the prior score and date.
 */
export function questionnaireChanges(state: PatientState, since: string): Finding[] {
  const tz = state.timezone;
  return (doc(state, "questionnaires")?.instruments ?? []).flatMap((i) => i.history.flatMap((h, k) => {
    if (h.timestamp < since) return [];
    const c = changeAt(i.history, k);
    const f = resultFlags(h, c);
    if (!f.clinically_significant && !f.worsened && !f.exceeds_mid) return [];
    const mid = h.minimally_important_difference;
    const vs = c ? `; ${changeText(c, tz)}${f.exceeds_mid && mid !== null ? `; MID ${mid}` : ""}` : "; no earlier score to compare";
    const prior = priorOf(i.history, h, c);
    return [{
      timestamp: h.timestamp,
      line: `${i.instrument_id}: ${scoreText(h)}${vs}${f.clinically_significant ? "; clinically significant" : ""}`,
      log_ids: prior ? [h.log_id, prior.log_id] : [h.log_id],
    }];
  }));
}

/** The modules the alert reads. */
export const ALERT_MODULES = ["symptoms", "lab_results", "adherence", "vitals", "glucose", "heart", "questionnaires"] as const;

/** Latest event time among the modules the alert reads, or null when none holds data. */
export function latestOf(state: PatientState): string | null {
  const ts = ALERT_MODULES.map((k) => moduleEntry(state, k)?.updated_at);
  return ts.filter((t): t is string => typeof t === "string").sort().at(-1) ?? null;
}
