/** questionnaire_snapshot: latest score per instrument, the week's administrations, significant results. */
import type { Instrument, ItemResponse, ScoreChange, ScoreEntry } from "../modules/questionnaires/index.js";
import { scalarText } from "../../catalog/json-shape.js";
import { cmpTime } from "../lib/time.js";
import type { PatientState } from "../patient-state.js";
import { block, clean, cmp, day, doc, entry, fmt, inWeek, parts, plural, signed, words } from "./lib.js";
import type { RecentEntry, ViewBlock, ViewDef, Window } from "./types.js";

const name = (i: Instrument) => clean(i.instrument_id, 60);

/** "17/27 (moderately severe)": an administration's total score and severity. */
export function scoreText(s: ScoreEntry): string {
  const total = s.total_score === null ? "no total score" : s.total_score_max !== null ? `${fmt(s.total_score)}/${fmt(s.total_score_max)}` : fmt(s.total_score);
  return `${total}${s.severity_category ? ` (${words(s.severity_category)})` : ""}`;
}

function answerText(r: ItemResponse): string {
  const value = scalarText(r.response_value) ?? JSON.stringify(r.response_value);
  return `${clean(value, 60)}${r.response_scale_max !== null ? `/${r.response_scale_max}` : ""}${r.response_label ? ` (${clean(r.response_label, 40)})` : ""}`;
}

/**
 * What makes one administration a significant result, given its change against the one
 * before it (changeAt): the client's clinically_significant flag; worsening only as the
 * client classified it, since whether a higher score is better depends on the instrument;
 * and a change of at least the minimally important difference the client sent, either way.
 * The significant_results block flags the first two; provider_alert all three.
 */
export function resultFlags(s: ScoreEntry, c: ScoreChange | null): { clinically_significant: boolean; worsened: boolean; exceeds_mid: boolean } {
  return {
    clinically_significant: s.clinically_significant === true,
    worsened: /wors|deterior/i.test(c?.classification ?? s.change_classification ?? ""),
    exceeds_mid: c?.exceeds_mid === true,
  };
}
export const worsened = (i: Instrument): boolean => resultFlags(i.latest, i.change).worsened;
export const significant = (i: Instrument): boolean => resultFlags(i.latest, i.change).clinically_significant;

/** The administration a change of `s` compares against, from `history` (none for a change the client reported). */
export function priorOf(history: readonly ScoreEntry[], s: ScoreEntry, c: ScoreChange | null): ScoreEntry | undefined {
  if (c?.basis !== "history") return undefined;
  const before = history.slice(0, history.indexOf(s));
  return [...before].reverse().find((h) => h.timestamp === c.prior_date);
}
const prior = (i: Instrument) => priorOf(i.history, i.latest, i.change);

/** "+9 from 8 on 2026-06-19 (worsened, exceeds MID)": a change against the prior administration. */
export function changeText(c: ScoreChange, tz: string): string {
  const cls = parts(c.basis === "client" && "as reported", c.classification && words(c.classification), c.exceeds_mid && "exceeds MID");
  const from = parts(c.prior_score !== null && `from ${fmt(c.prior_score)}`, c.prior_date !== null && `on ${day(c.prior_date, tz)}`);
  return `${[signed(c.change), ...from].join(" ")}${cls.length ? ` (${cls.join(", ")})` : ""}`;
}

function latestLine(i: Instrument, w: Window): string {
  const vs = i.change ? `; ${changeText(i.change, w.tz)}` : "";
  const sig = significant(i) ? "; clinically significant" : "";
  return `**${name(i)}**: ${scoreText(i.latest)} on ${day(i.latest.timestamp, w.tz)}${vs}${sig}; ${plural(i.administrations, "administration")}`;
}

interface WeekItem { timestamp: string; log_id: string; line: string; data: unknown }

function weekItems(instruments: readonly Instrument[], answers: readonly ItemResponse[], w: Window): WeekItem[] {
  const scores = instruments.flatMap((i) => i.history.filter((h) => inWeek(w, h.timestamp)).map((h) => ({
    timestamp: h.timestamp, log_id: h.log_id, line: `**${name(i)}**: ${scoreText(h)}`, data: { instrument_id: i.instrument_id, ...h },
  })));
  const items = answers.filter((r) => inWeek(w, r.timestamp)).map((r) => ({
    timestamp: r.timestamp, log_id: r.log_id, line: `**${clean(r.question, 100)}**: ${answerText(r)}`, data: r,
  }));
  return [...scores, ...items].sort((a, b) => cmpTime(b.timestamp, a.timestamp) || cmp(b.log_id, a.log_id));
}

function blocks(state: PatientState, w: Window): ViewBlock[] {
  const d = doc(state, "questionnaires");
  const instruments = d?.instruments ?? [];
  const week = weekItems(instruments, d?.item_responses ?? [], w);
  const flagged = instruments.filter((i) => significant(i) || worsened(i));
  const why = (i: Instrument) => parts(significant(i) && "clinically significant", worsened(i) && "worsened").join(", ");
  return [
    ...block("latest_scores", "Latest scores", "long_term", instruments.map((i) => latestLine(i, w)),
      instruments.flatMap((i) => [i.latest.log_id, prior(i)?.log_id]),
      instruments.map(({ latest_item_responses: _r, history: _h, ...i }) => i)),
    ...block("week_administrations", "Administrations in the last 7 days", "week",
      week.map((x) => `${day(x.timestamp, w.tz)} ${x.line}`), week.map((x) => x.log_id), week.map((x) => x.data)),
    ...block("significant_results", "Significant or worsening results", "temp",
      flagged.map((i) => `**${name(i)}**: ${scoreText(i.latest)} on ${day(i.latest.timestamp, w.tz)}: ${why(i)}`),
      flagged.flatMap((i) => [i.latest.log_id, worsened(i) ? prior(i)?.log_id : undefined]),
      flagged.map((i) => ({ instrument_id: i.instrument_id, latest: i.latest, clinically_significant: significant(i), worsened: worsened(i) }))),
  ];
}

function entries(state: PatientState): RecentEntry[] {
  const d = doc(state, "questionnaires");
  return [
    ...(d?.instruments ?? []).flatMap((i) => i.history.map((h) => entry("questionnaires", "questionnaire_response", h, `${i.instrument_id} ${scoreText(h)}`))),
    ...(d?.item_responses ?? []).map((r) => entry("questionnaires", "questionnaire_item_response", r, `${clean(r.question, 80)}: ${answerText(r)}`)),
  ];
}

export const questionnaireSnapshot: ViewDef = {
  type: "questionnaire_snapshot", title: "Questionnaire snapshot", inputs: ["questionnaires"], blocks, entries,
};
