/** symptom_snapshot: tracked symptoms, their week's changes, mood and patient-reported metrics. */
import { HISTORY } from "../lib/lists.js";
import { cmpTime } from "../lib/time.js";
import type { FreeTextReport, Symptom, SymptomReport } from "../modules/symptoms/index.js";
import type { PatientState } from "../patient-state.js";
import { block, clean, day, doc, entry, fmt, inWeek, plural, scored, spread } from "./lib.js";
import type { RecentEntry, ViewBlock, ViewDef, Window } from "./types.js";

/** Scales of the standard instruments (as the symptoms module fills them in). */
const SCALE_MAX: Record<string, number> = { esas_r: 10, pro_ctcae: 4, ctcae: 5, custom: 10 };

function maxOf(s: Symptom, instrument: string): number | null {
  return instrument === s.instrument && s.scale_max !== null ? s.scale_max : (SCALE_MAX[instrument] ?? null);
}

const score = (s: Symptom, r: SymptomReport) => `${scored(r.score, maxOf(s, r.instrument))} (${r.instrument})`;

/**
 * Severe: >= 3 on PRO-CTCAE or CTCAE grades, >= 7 on a 0-10 scale. Other scales are not
 * judged: the threshold would be a guess.
 */
export function isSevere(s: Symptom): boolean {
  if (s.status !== "active") return false;
  if (s.instrument === "pro_ctcae" || s.instrument === "ctcae") return s.current_score >= 3;
  const max = maxOf(s, s.instrument);
  return max === 10 && (s.scale_min ?? 0) === 0 && s.current_score >= 7;
}

/** The latest report of a symptom that has one (the blocks below list only those). */
const latestOf = (s: Symptom) => s.history[s.history.length - 1]!;

/** The first report of the current run of non-zero scores: since when it is active. */
function activeSince(s: Symptom): SymptomReport | undefined {
  let i = s.history.length - 1;
  while (i > 0 && s.history[i - 1]!.score > 0) i--;
  return s.history[i];
}

/**
 * "active since 2026-11-02"; when the run reaches back to the oldest report the module
 * keeps (its last HISTORY), the run may be older: "active since at least …", with the
 * symptom's first report.
 */
function activeText(s: Symptom, since: SymptomReport | undefined, w: Window): string {
  const cut = since !== undefined && since === s.history[0] && s.history.length >= HISTORY && cmpTime(s.first_reported_at, since.timestamp) < 0;
  return cut ? `active since at least ${day(since.timestamp, w.tz)} (first reported ${day(s.first_reported_at, w.tz)})` : `active since ${day(since?.timestamp, w.tz)}`;
}

function trend(s: Symptom, latest: SymptomReport, prev: SymptomReport | undefined, tz: string): string {
  if (!prev) return "first report";
  const was = `${score(s, prev)} on ${day(prev.timestamp, tz)}`;
  if (prev.instrument !== latest.instrument) return `previously ${was}`;
  return latest.score > prev.score ? `up from ${was}` : latest.score < prev.score ? `down from ${was}` : `unchanged from ${was}`;
}

function active(s: Symptom, w: Window): { line: string; ids: string[]; data: unknown } {
  const latest = latestOf(s);
  const prev = s.history[s.history.length - 2];
  const since = activeSince(s);
  const details = latestDetails(s);
  const detailText = details.length > 0 ? `; ${details.map((d) => `${clean(d.detail_type, 40)}: ${clean(d.response, 80)}`).join("; ")}` : "";
  const t = trend(s, latest, prev, w.tz);
  return {
    line: `**${clean(s.name, 80)}**: ${score(s, latest)} on ${day(latest.timestamp, w.tz)}, ${t}; ${activeText(s, since, w)}${detailText}`,
    ids: [latest.log_id, prev?.log_id ?? "", since?.log_id ?? "", ...details.map((d) => d.log_id)],
    data: {
      name: s.name, snomed_code: s.snomed_code, meddra_code: s.meddra_code, score: s.current_score, scale_max: maxOf(s, s.instrument),
      instrument: s.instrument, reported_at: latest.timestamp, previous: prev ?? null, active_since: since?.timestamp ?? null,
      details: details.map((d) => ({ detail_type: d.detail_type, response: d.response, timestamp: d.timestamp })),
    },
  };
}

/** The latest detail of each type, at most three. */
function latestDetails(s: Symptom) {
  const seen = new Set<string>();
  return [...s.details].reverse().filter((d) => !seen.has(d.detail_type) && (seen.add(d.detail_type), true)).slice(0, 3);
}

type Change = "new" | "worsened" | "improved" | "resolved" | "returned" | "stable" | "changed instrument";

function change(s: Symptom, w: Window): { line: string; ids: string[]; data: unknown } | null {
  const wk = s.history.filter((h) => inWeek(w, h.timestamp));
  const first = wk[0];
  const latest = wk.at(-1);
  if (first === undefined || latest === undefined) return null;
  const before = s.history.filter((h) => !inWeek(w, h.timestamp));
  const baseline = before[before.length - 1];
  // The module keeps the last HISTORY reports: a full history starting inside the week, with
  // a report older than the oldest kept, may have lost the week's first reports.
  const partial = !baseline && s.history.length >= HISTORY && cmpTime(s.first_reported_at, first.timestamp) < 0;
  const ref = baseline ?? first;
  const isNew = inWeek(w, s.first_reported_at) && !baseline && !partial;
  // Resolving (a 0) or returning says more than which instrument measured it.
  const kind: Change = latest.score === 0 && ref.score > 0 ? "resolved"
    : ref.score === 0 && latest.score > 0 && !isNew ? "returned"
    : ref.instrument !== latest.instrument ? "changed instrument"
    : isNew ? "new"
    : latest.score > ref.score ? "worsened" : latest.score < ref.score ? "improved" : "stable";
  const from = ref === latest ? "" : `${partial ? "earliest kept report " : ""}${score(s, ref)} on ${day(ref.timestamp, w.tz)} → `;
  const count = partial ? `at least ${wk.length} reports this week; older ones not kept` : `${plural(wk.length, "report")} this week`;
  return {
    line: `**${clean(s.name, 80)}**: ${kind}, ${from}${score(s, latest)} on ${day(latest.timestamp, w.tz)} (${count})`,
    ids: [...wk.map((h) => h.log_id), baseline?.log_id ?? ""],
    data: { name: s.name, change: kind, from: ref === latest ? null : ref, to: latest, reports_this_week: wk.length, partial },
  };
}

function resolved(s: Symptom, w: Window): { line: string; ids: string[]; data: unknown } {
  const latest = latestOf(s);
  const lastNonZero = [...s.history].reverse().find((h) => h.score > 0);
  const before = lastNonZero ? `; last non-zero ${score(s, lastNonZero)} on ${day(lastNonZero.timestamp, w.tz)}` : "";
  return {
    line: `**${clean(s.name, 80)}**: resolved ${day(latest.timestamp, w.tz)}${before}`,
    ids: [latest.log_id, lastNonZero?.log_id ?? ""],
    data: { name: s.name, resolved_at: latest.timestamp, last_score: lastNonZero ?? null },
  };
}

function moodBlock(state: PatientState, w: Window): ViewBlock[] {
  const lines: string[] = [];
  const ids: string[] = [];
  const data: unknown[] = [];
  for (const m of doc(state, "emotional_state")?.moods ?? []) {
    const wk = m.history.filter((h) => inWeek(w, h.timestamp));
    const latest = wk.at(-1);
    if (latest === undefined) continue;
    const range = spread(wk.flatMap((h) => (h.intensity === null ? [] : [h.intensity])));
    const now = latest.intensity === null ? "reported (no intensity)" : latest.intensity === 0 ? "resolved (0/10)" : `${fmt(latest.intensity)}/10`;
    const extra = wk.length > 1 && range ? ` (${wk.length} reports, range ${fmt(range.min)}–${fmt(range.max)})` : "";
    lines.push(`**${clean(m.mood, 60)}**: ${now} on ${day(latest.timestamp, w.tz)}${extra}`);
    ids.push(...wk.map((h) => h.log_id));
    data.push({
      mood: m.mood, status: m.status, intensity: latest.intensity, reported_at: latest.timestamp, reports: wk.length,
      min: range?.min ?? null, max: range?.max ?? null,
    });
  }
  return block("mood", "Mood (last 7 days)", "week", lines, ids, data);
}

function metricsBlock(state: PatientState, w: Window): ViewBlock[] {
  const lines: string[] = [];
  const ids: string[] = [];
  const data: unknown[] = [];
  for (const m of doc(state, "symptoms")?.health_metrics ?? []) {
    const wk = m.history.filter((h) => inWeek(w, h.timestamp));
    const latest = wk.at(-1);
    if (latest === undefined) continue;
    const s = spread(wk.map((h) => h.score)) as NonNullable<ReturnType<typeof spread>>;
    const extra = wk.length > 1 ? `; mean ${fmt(s.mean, 1)}, range ${fmt(s.min)}–${fmt(s.max)} (${wk.length} readings)` : "";
    lines.push(`**${clean(m.metric_type, 60)}**: ${scored(latest.score, latest.scale_max)} on ${day(latest.timestamp, w.tz)}${extra}`);
    ids.push(...wk.map((h) => h.log_id));
    data.push({ metric_type: m.metric_type, latest, readings: wk.length, mean: s.mean, min: s.min, max: s.max });
  }
  return block("health_metrics", "Health metrics (last 7 days)", "week", lines, ids, data);
}

const noteLine = (w: Window) => (f: FreeTextReport) => {
  const about = f.associated_symptoms.length ? ` (${f.associated_symptoms.map((a) => clean(a.name, 40)).join(", ")})` : "";
  return `${day(f.timestamp, w.tz)}: "${clean(f.text)}"${about}`;
};

function blocks(state: PatientState, w: Window): ViewBlock[] {
  const d = doc(state, "symptoms");
  const list = (d?.symptoms ?? []).filter((s) => s.history.length > 0);
  // Severe first, then by the share of its scale, so 3/4 (PRO-CTCAE) ranks above 6/10.
  const share = (s: Symptom) => s.current_score / (maxOf(s, s.instrument) ?? 10);
  const byScore = (a: Symptom, b: Symptom) => Number(isSevere(b)) - Number(isSevere(a)) || share(b) - share(a);
  const act = list.filter((s) => s.status === "active").sort(byScore).map((s) => active(s, w));
  const chg = list.flatMap((s) => change(s, w) ?? []);
  const res = list.filter((s) => s.status === "resolved").map((s) => resolved(s, w));
  const notes = (d?.free_text ?? []).filter((f) => inWeek(w, f.timestamp)).reverse();
  const severe = list.filter(isSevere).sort(byScore);
  const pending = d?.pending_details ?? [];
  const follow = [
    ...severe.map((s) => `**${clean(s.name, 80)}**: severe, ${score(s, latestOf(s))} on ${day(latestOf(s).timestamp, w.tz)}`),
    ...pending.map((p) => `**${clean(p.symptom_type, 80)}**: ${clean(p.detail_type, 40)} "${clean(p.response, 80)}" reported ${day(p.timestamp, w.tz)}`
      + " with no score yet: ask for a severity score"),
  ];
  return [
    ...block("active_symptoms", "Active symptoms", "long_term", act.map((x) => x.line), act.flatMap((x) => x.ids), act.map((x) => x.data)),
    ...block("week_changes", "Symptom changes (last 7 days)", "week", chg.map((x) => x.line), chg.flatMap((x) => x.ids), chg.map((x) => x.data)),
    ...block("resolved_symptoms", "Resolved symptoms", "long_term", res.map((x) => x.line), res.flatMap((x) => x.ids), res.map((x) => x.data)),
    ...moodBlock(state, w),
    ...metricsBlock(state, w),
    ...block("patient_notes", "Patient's own words (last 7 days)", "week",
      notes.map(noteLine(w)),
      notes.map((f) => f.log_id), notes.map((f) => ({ timestamp: f.timestamp, text: f.text, associated_symptoms: f.associated_symptoms.map((a) => a.name) }))),
    ...block("symptoms_to_follow_up", "Symptoms to follow up", "temp", follow,
      [...severe.map((s) => latestOf(s).log_id), ...pending.map((p) => p.log_id)],
      [...severe.map((s) => ({ reason: "severe", name: s.name, score: s.current_score, instrument: s.instrument, reported_at: latestOf(s).timestamp })),
        ...pending.map((p) => ({ reason: "pending_detail", name: p.symptom_type, detail_type: p.detail_type, response: p.response, reported_at: p.timestamp }))]),
  ];
}

function entries(state: PatientState): RecentEntry[] {
  const d = doc(state, "symptoms");
  const intensity = (n: number | null) => (n === null ? "(no intensity)" : `${fmt(n)}/10`);
  return [
    ...(d?.symptoms ?? []).flatMap((s) => [
      ...s.history.map((h) => entry("symptoms", "symptom_report", h, `${s.name} ${score(s, h)}`)),
      ...s.details.map((x) => entry("symptoms", "symptom_detail", x, `${s.name} ${x.detail_type}: ${clean(x.response, 80)}`)),
    ]),
    ...(d?.pending_details ?? []).map((p) => entry("symptoms", "symptom_detail", p, `${p.symptom_type} ${p.detail_type}: ${clean(p.response, 80)}`)),
    ...(d?.free_text ?? []).map((f) => entry("symptoms", "symptom_free_text", f, clean(f.text, 120))),
    ...(d?.health_metrics ?? []).flatMap((m) => m.history.map((h) => entry("symptoms", "health_metric", h, `${m.metric_type} ${scored(h.score, h.scale_max)}`))),
    ...(doc(state, "emotional_state")?.moods ?? []).flatMap((m) =>
      m.history.map((h) => entry("emotional_state", "mood_report", h, `${m.mood} ${intensity(h.intensity)}`))),
  ];
}

export const symptomSnapshot: ViewDef = { type: "symptom_snapshot", title: "Symptom snapshot", inputs: ["symptoms", "emotional_state"], blocks, entries };
