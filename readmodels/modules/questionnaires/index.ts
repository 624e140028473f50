import type { LogPayloads } from "../../../catalog/payloads.js";
import type { LogOf } from "../../log-record.js";
import { HISTORY, insertSorted, last, RECENT, replaceAt } from "../../lib/lists.js";
import { finite, items, normName, record, round, text, truth, type Obj } from "../../lib/payload.js";
import { withDoc, type ModuleState, type ReadModel } from "../../module.js";

export interface ScoreEntry {
  timestamp: string;
  log_id: string;
  total_score: number | null;
  total_score_max: number | null;
  severity_category: string | null;
  clinically_significant: boolean | null;
  domain_scores: Obj | null;
  /** The client's own change classification for this administration (improved, stable, worsened), if sent. */
  change_classification: string | null;
  minimally_important_difference: number | null;
  /** The change the client sent with this administration (its `change` object), when it gave one. */
  reported_change: ReportedChange | null;
}

/** A client's own change against a prior administration the service may never have seen. */
export interface ReportedChange {
  prior_score: number | null;
  prior_date: string | null;
  change: number;
}

/**
 * Change of the latest total score against the one before it (both by event time), or,
 * when the service cannot compute that (no earlier scored administration, or the latest has
 * no total), the change the client sent with the latest one (`basis: "client"`): history
 * the service holds wins over what a client says.
 * `direction` is arithmetic only: whether a higher score is better depends on the
 * instrument (PHQ-9: worse; FACT-G: better), so `classification` is only the client's.
 */
export interface ScoreChange {
  /** Null only for a client's change sent without prior_score (and without a total to derive it). */
  prior_score: number | null;
  /** Null only for a client's change sent without prior_date. */
  prior_date: string | null;
  change: number;
  /** "history": computed from two administrations the service holds; "client": the latest administration's own `change`. */
  basis: "history" | "client";
  direction: "increased" | "decreased" | "unchanged";
  /** |change| ≥ the minimally important difference sent with the latest administration. */
  exceeds_mid: boolean | null;
  classification: string | null;
}

/** One instrument, identified by instrument_id (case-insensitive). */
export interface Instrument {
  instrument_id: string;
  instrument_type: string | null;
  instrument_version: string | null;
  administrations: number;
  latest: ScoreEntry;
  /** Item responses of the latest administration. */
  latest_item_responses: Obj[];
  change: ScoreChange | null;
  /** The last 50 administrations by event time. */
  history: ScoreEntry[];
}

export interface ItemResponse {
  timestamp: string;
  log_id: string;
  instrument_id: string | null;
  item_number: number | null;
  question: string;
  response_value: unknown;
  response_label: string | null;
  response_scale_max: number | null;
  context: string | null;
}

export interface QuestionnairesDoc {
  instruments: Instrument[];
  /** Standalone questionnaire_item_response answers, the last 50. */
  item_responses: ItemResponse[];
}

function changeOf(history: readonly ScoreEntry[]): ScoreChange | null {
  const latest = last(history);
  if (!latest) return null;
  const scored = history.filter((h): h is ScoreEntry & { total_score: number } => h.total_score !== null);
  const prior = scored[scored.length - 2];
  const newest = last(scored);
  if (prior && newest === latest) {
    return describe(latest, prior.total_score, prior.timestamp, newest.total_score - prior.total_score, "history");
  }
  // Nothing to compute from (no earlier score held, or the latest has no total): the client
  // may know a prior score from before this service, or a change its total could not show.
  const r = latest.reported_change;
  return r ? describe(latest, r.prior_score, r.prior_date, r.change, "client") : null;
}

/**
 * The change of the administration at `index` of a history against the one before it: what
 * `change` holds when that administration is the latest, so every administration is judged
 * by one rule.
 */
export function changeAt(history: readonly ScoreEntry[], index: number): ScoreChange | null {
  return changeOf(history.slice(0, index + 1));
}

function describe(latest: ScoreEntry, prior_score: number | null, prior_date: string | null, delta: number, basis: ScoreChange["basis"]): ScoreChange {
  const change = round(delta, 4);
  const mid = latest.minimally_important_difference;
  return {
    prior_score, prior_date, change, basis,
    direction: change > 0 ? "increased" : change < 0 ? "decreased" : "unchanged",
    exceeds_mid: mid === null ? null : Math.abs(change) >= mid,
    classification: latest.change_classification,
  };
}

/** The `change` a client sends with an administration. */
type ClientChange = NonNullable<LogPayloads["questionnaire_response"]["change"]>;

/** The client's change: its `change`, else total_score minus prior_score; null when neither can be had. */
function reportedChange(change: ClientChange | undefined, total: number | null): ReportedChange | null {
  const prior = finite(change?.prior_score) ?? null;
  const delta = finite(change?.change) ?? (prior !== null && total !== null ? total - prior : undefined);
  if (delta === undefined) return null;
  return {
    prior_score: prior ?? (total !== null ? round(total - delta, 4) : null), prior_date: text(change?.prior_date) ?? null,
    change: round(delta, 4),
  };
}

function applyResponse(s: ModuleState<QuestionnairesDoc>, log: LogOf<"questionnaire_response">): ModuleState<QuestionnairesDoc> {
  const p = log.payload;
  const instrument = record(p.instrument);
  const id = text(instrument?.instrument_id);
  if (id === undefined) return s;
  const scores = record(p.scores);
  const change = record(p.change);
  const total = finite(scores?.total_score) ?? null;
  const entry: ScoreEntry = {
    timestamp: log.timestamp, log_id: log.id, total_score: total,
    total_score_max: finite(scores?.total_score_max) ?? null, severity_category: text(scores?.severity_category) ?? null,
    clinically_significant: truth(scores?.clinically_significant) ?? null, domain_scores: record(scores?.domain_scores) ?? null,
    // Any non-blank classification, not only the catalog's three: one stored under an older catalog keeps its own.
    change_classification: text(change?.change_classification) ?? null,
    minimally_important_difference: finite(change?.minimally_important_difference) ?? null,
    reported_change: reportedChange(change, total),
  };
  const at = s.doc.instruments.findIndex((i) => normName(i.instrument_id) === normName(id));
  const prev = at >= 0 ? s.doc.instruments[at] : undefined;
  const history = insertSorted(prev?.history ?? [], entry, HISTORY);
  const isLatest = last(history) === entry;
  const next: Instrument = {
    instrument_id: isLatest ? id : (prev?.instrument_id ?? id),
    instrument_type: (isLatest ? text(instrument?.instrument_type) : undefined) ?? prev?.instrument_type ?? null,
    instrument_version: (isLatest ? text(instrument?.instrument_version) : undefined) ?? prev?.instrument_version ?? null,
    administrations: (prev?.administrations ?? 0) + 1,
    latest: last(history) as ScoreEntry,
    latest_item_responses: isLatest ? [...items(p.item_responses)] : (prev?.latest_item_responses ?? []),
    change: changeOf(history),
    history,
  };
  return withDoc(s, { ...s.doc, instruments: replaceAt(s.doc.instruments, at, next) });
}

function applyItem(s: ModuleState<QuestionnairesDoc>, log: LogOf<"questionnaire_item_response">): ModuleState<QuestionnairesDoc> {
  const p = log.payload;
  const question = text(p.question);
  // Kept as sent, whatever it holds (ItemResponse.response_value is unknown): only a missing one skips the answer.
  const response_value: unknown = p.response_value;
  if (question === undefined || response_value === undefined) return s;
  const item: ItemResponse = {
    timestamp: log.timestamp, log_id: log.id, instrument_id: text(p.instrument_id) ?? null,
    item_number: finite(p.item_number) ?? null, question, response_value,
    response_label: text(p.response_label) ?? null, response_scale_max: finite(p.response_scale_max) ?? null,
    // Any non-blank context, not only the catalog's three: one stored under an older catalog keeps its own.
    context: text(p.context) ?? null,
  };
  return withDoc(s, { ...s.doc, item_responses: insertSorted(s.doc.item_responses, item, RECENT) });
}

export const handles = ["questionnaire_response", "questionnaire_item_response"] as const;

export const questionnaires: ReadModel<"questionnaires", QuestionnairesDoc, (typeof handles)[number]> = {
  key: "questionnaires",
  kind: "event",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ instruments: [], item_responses: [] }),
  evolve: (s, log) => (log.log_type === "questionnaire_response" ? applyResponse(s, log) : applyItem(s, log)),
};
