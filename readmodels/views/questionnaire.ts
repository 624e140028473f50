/** questionnaire_snapshot: latest score per instrument, the week's administrations, significant results. */
import type { Instrument, ScoreEntry } from "../modules/questionnaires/index.js";
import { cmpTime } from "../lib/time.js";
import type { PatientState } from "../patient-state.js";
import { block, clean, cmp, day, doc, fmt, inWeek, signed, words } from "./lib.js";
import type { RecentEntry, ViewBlock, ViewDef, Window } from "./types.js";

const name = (i: Instrument) => clean(i.instrument_id, 60);

function scoreText(s: ScoreEntry): string {
  const total = s.total_score === null ? "no total score" : s.total_score_max !== null ? `${fmt(s.total_score)}/${fmt(s.total_score_max)}` : fmt(s.total_score);
  return `${total}${s.severity_category ? ` (${words(s.severity_category)})` : ""}`;
}

/** Worsening only as the client classified it: whether a higher score is better depends on the instrument. */
const worsened = (i: Instrument) => /wors|deterior/i.test(i.change?.classification ?? i.latest.change_classification ?? "");

const prior = (i: Instrument) => (i.change ? [...i.history].reverse().find((h) => h.timestamp === i.change?.prior_date && h !== i.latest) : undefined);

function latestLine(i: Instrument, w: Window): string {
  const c = i.change;
  const cls = [c?.classification && words(c.classification), c?.exceeds_mid ? "exceeds MID" : null].filter((x): x is string => !!x);
  const vs = c ? `; ${signed(c.change)} from ${fmt(c.prior_score)} on ${day(c.prior_date, w.tz)}${cls.length ? ` (${cls.join(", ")})` : ""}` : "";
  const sig = i.latest.clinically_significant ? "; clinically significant" : "";
  return `**${name(i)}**: ${scoreText(i.latest)} on ${day(i.latest.timestamp, w.tz)}${vs}${sig}; ${i.administrations} administration${i.administrations === 1 ? "" : "s"}`;
}

function blocks(state: PatientState, w: Window): ViewBlock[] {
  const d = doc(state, "questionnaires");
  const instruments = d?.instruments ?? [];
  const wkScores = instruments.flatMap((i) => i.history.filter((h) => inWeek(w, h.timestamp)).map((h) => ({ i, h })));
  const wkItems = (d?.item_responses ?? []).filter((r) => inWeek(w, r.timestamp));
  const week = [
    ...wkScores.map(({ i, h }) => ({ timestamp: h.timestamp, log_id: h.log_id, line: `**${name(i)}**: ${scoreText(h)}`, data: { instrument_id: i.instrument_id, ...h } })),
    ...wkItems.map((r) => {
      const label = r.response_label ? ` (${clean(r.response_label, 40)})` : "";
      const value = typeof r.response_value === "object" ? JSON.stringify(r.response_value) : String(r.response_value);
      return { timestamp: r.timestamp, log_id: r.log_id, line: `**${clean(r.question, 100)}**: ${clean(value, 60)}${r.response_scale_max !== null ? `/${r.response_scale_max}` : ""}${label}`, data: r as unknown };
    }),
  ].sort((a, b) => cmpTime(b.timestamp, a.timestamp) || cmp(b.log_id, a.log_id));
  const flagged = instruments.filter((i) => i.latest.clinically_significant === true || worsened(i));
  return [
    ...block("latest_scores", "Latest scores", "long_term", instruments.map((i) => latestLine(i, w)),
      instruments.flatMap((i) => [i.latest.log_id, prior(i)?.log_id ?? ""]),
      instruments.map((i) => ({ instrument_id: i.instrument_id, instrument_type: i.instrument_type, administrations: i.administrations, latest: i.latest, change: i.change }))),
    ...block("week_administrations", "Administrations in the last 7 days", "week", week.map((x) => `${day(x.timestamp, w.tz)} ${x.line}`), week.map((x) => x.log_id), week.map((x) => x.data)),
    ...block("significant_results", "Significant or worsening results", "temp",
      flagged.map((i) => `**${name(i)}**: ${scoreText(i.latest)} on ${day(i.latest.timestamp, w.tz)}: ${[i.latest.clinically_significant ? "clinically significant" : null, worsened(i) ? "worsened" : null].filter((x) => x !== null).join(", ")}`),
      flagged.flatMap((i) => [i.latest.log_id, worsened(i) ? prior(i)?.log_id ?? "" : ""]),
      flagged.map((i) => ({ instrument_id: i.instrument_id, latest: i.latest, clinically_significant: i.latest.clinically_significant === true, worsened: worsened(i) }))),
  ];
}

function entries(state: PatientState): RecentEntry[] {
  const d = doc(state, "questionnaires");
  const out: RecentEntry[] = [];
  for (const i of d?.instruments ?? []) {
    for (const h of i.history) out.push({ timestamp: h.timestamp, module_type: "questionnaires", kind: "questionnaire_response", summary: `${i.instrument_id} ${scoreText(h)}`, log_id: h.log_id });
  }
  for (const r of d?.item_responses ?? []) {
    out.push({ timestamp: r.timestamp, module_type: "questionnaires", kind: "questionnaire_item_response", summary: `${clean(r.question, 80)}: ${clean(typeof r.response_value === "object" ? JSON.stringify(r.response_value) : String(r.response_value), 40)}`, log_id: r.log_id });
  }
  return out;
}

export const questionnaireSnapshot: ViewDef = { type: "questionnaire_snapshot", title: "Questionnaire snapshot", inputs: ["questionnaires"], blocks, entries };
