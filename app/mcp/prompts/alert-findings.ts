import { moduleEntry, type PatientState } from "../../../readmodels/patient-state.js";
import { doc, sourceIds } from "../../../readmodels/views/lib.js";
import { findMedication } from "../../../readmodels/modules/medications/index.js";
import type { Symptom } from "../../../readmodels/modules/symptoms/index.js";
import { isSevere } from "../../../readmodels/views/symptom.js";
import { GLUCOSE_HIGH, GLUCOSE_LOW, SPO2_LOW } from "../../../readmodels/views/device.js";
import { schedulesAt } from "../../../readmodels/views/medication.js";
import { changeAt } from "../../../readmodels/modules/questionnaires/index.js";
import { changeText, priorOf, resultFlags, scoreText } from "../../../readmodels/views/questionnaire.js";

export interface Finding {
  timestamp: string;
  line: string;
  log_ids: string[];
}

/**
 * Vital signs out of the usual adult range (stated in the alert): fever from 37.8 °C,
 * tachycardia above 100 bpm, and so on. They flag a value for a clinician to look at, not a
 * diagnosis.
 */
export const VITAL_LIMITS: Record<string, { label: string; unit: string; low?: number; high?: number }> = {
  temperature_celsius: { label: "Temperature", unit: "°C", low: 35, high: 37.8 },
  heart_rate_bpm: { label: "Heart rate", unit: "bpm", low: 50, high: 100 },
  systolic_bp_mmhg: { label: "Systolic BP", unit: "mmHg", low: 90, high: 160 },
  diastolic_bp_mmhg: { label: "Diastolic BP", unit: "mmHg", low: 60, high: 100 },
  spo2_percent: { label: "SpO2", unit: "%", low: 92 },
  respiratory_rate_bpm: { label: "Respiratory rate", unit: "breaths/min", low: 10, high: 24 },
};

export const LIMITS_TEXT = [
  ...Object.values(VITAL_LIMITS).map((l) => `${l.label} ${[l.low !== undefined && `below ${l.low}`, l.high !== undefined && `above ${l.high}`].filter(Boolean).join(" or ")} ${l.unit}`),
  `CGM glucose below ${GLUCOSE_LOW} or above ${GLUCOSE_HIGH} mg/dL`, `device SpO2 below ${SPO2_LOW}%`,
].join("; ");

const formatters = new Map<string, Intl.DateTimeFormat>();
/** "2026-07-02 08:00" in the patient's zone: the clock the patient took the dose by. */
export function localClock(iso: string, tz: string): string {
  let f = formatters.get(tz);
  if (!f) formatters.set(tz, (f = new Intl.DateTimeFormat("en-CA", { timeZone: tz, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" })));
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : f.format(ms).replace(",", "");
}

/** "reference 3.5–5.1", "reference ≤ 3", "reference ≥ 60": a missing bound is said, not printed empty. */
export function referenceText(low: number | null, high: number | null): string {
  if (low !== null && high !== null) return `, reference ${low}–${high}`;
  if (high !== null) return `, reference ≤ ${high}`;
  if (low !== null) return `, reference ≥ ${low}`;
  return "";
}

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

export function abnormalLabs(state: PatientState, since: string): Finding[] {
  return (doc(state, "lab_results")?.results ?? []).flatMap((r) =>
    r.history.filter((v) => v.abnormal_flag !== null && v.abnormal_flag !== "N" && v.timestamp >= since).map((v) => ({
      timestamp: v.timestamp,
      line: `${r.test_name ?? r.loinc_code ?? "lab"}: ${v.value_numeric ?? v.value_string ?? "?"}${r.unit ? ` ${r.unit}` : ""} flag ${v.abnormal_flag}${
        v.abnormal_flag === "HH" || v.abnormal_flag === "LL" ? " (CRITICAL)" : ""}${referenceText(r.reference_range_low, r.reference_range_high)}`,
      log_ids: [v.log_id],
    })));
}

/** Skipped doses, and scheduled doses not reported by `now` (the time of the read). */
export function missedDoses(state: PatientState, since: string, now: string): Finding[] {
  const tz = state.timezone;
  const missed: Finding[] = (doc(state, "adherence")?.recent ?? []).filter((d) => d.status === "skipped" && d.timestamp >= since).map((d) => ({
    timestamp: d.timestamp,
    line: `${d.medication_name ?? d.rxnorm_cui ?? "medication"}: dose skipped${d.scheduled_time ? ` (scheduled ${localClock(d.scheduled_time, tz)})` : ""}`,
    log_ids: [d.log_id],
  }));
  // Scheduled doses with no report at all: a patient who stops reporting is not adherent.
  const medications = doc(state, "medications") ?? undefined;
  for (const sch of schedulesAt(state, now)) {
    const doses = sch.doses.filter((d) => d.status === "unreported" && d.scheduled_time >= since);
    if (doses.length === 0) continue;
    const times = doses.map((d) => localClock(d.scheduled_time, tz));
    const name = sch.medication_name ?? sch.rxnorm_cui ?? "medication";
    const span = times.length === 1 ? `scheduled ${times[0]}` : `${times.length} scheduled doses, ${times[0]} to ${times[times.length - 1]}`;
    missed.push({ timestamp: doses.at(-1)!.scheduled_time, line: `${name}: not reported (${span})`, log_ids: sourceIds(findMedication(medications, sch)) });
  }
  return missed;
}

export function vitalsOutOfRange(state: PatientState, since: string): Finding[] {
  const out: Finding[] = [];
  for (const h of (doc(state, "vitals")?.history ?? []).filter((x) => x.timestamp >= since)) {
    // In VITAL_LIMITS' order, whatever order the log listed them in.
    const bad = Object.entries(VITAL_LIMITS).flatMap(([k, l]) => {
      const v = h.measurements[k];
      if (v === undefined || !((l.low !== undefined && v < l.low) || (l.high !== undefined && v > l.high))) return [];
      return [`${l.label} ${v} ${l.unit}`];
    });
    if (bad.length) out.push({ timestamp: h.timestamp, line: bad.join(", "), log_ids: [h.log_id] });
  }
  return out;
}

export function deviceOutOfRange(state: PatientState, since: string): Finding[] {
  const glucose = (doc(state, "glucose")?.recent ?? [])
    .filter((r) => r.timestamp >= since && (r.glucose_mg_dl < GLUCOSE_LOW || r.glucose_mg_dl > GLUCOSE_HIGH))
    .map((r) => ({ timestamp: r.timestamp, line: `CGM glucose ${r.glucose_mg_dl} mg/dL`, log_ids: [r.log_id] }));
  const spo2 = (doc(state, "heart")?.recent ?? [])
    .filter((e) => e.kind === "spo2" && e.timestamp >= since && typeof e.values.spo2_percent === "number" && e.values.spo2_percent < SPO2_LOW)
    .map((e) => ({ timestamp: e.timestamp, line: `device SpO2 ${String(e.values.spo2_percent)}%`, log_ids: [e.log_id] }));
  return [...glucose, ...spo2];
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
