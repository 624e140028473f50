import type { LogPayloads } from "../../../catalog/payloads.js";
import type { LogOf } from "../../log-record.js";
import { findByIdentity, type Identity } from "../../lib/identity.js";
import { applyLifecycle } from "../../lib/lifecycle.js";
import { addSource, HISTORY, insertSorted, last, replaceAt, SOURCES } from "../../lib/lists.js";
import { finite, items, normName, text, type Obj } from "../../lib/payload.js";
import { withDoc, type ModuleState, type ReadModel } from "../../module.js";
import { itemExtensions, mergeExtensions } from "../../lib/extensions.js";
import type { HealthMetric, MetricReading, PendingDetail, Symptom, SymptomReport, SymptomsDoc } from "./types.js";

export type * from "./types.js";

const DETAILS = 20;
const FREE_TEXT = 20;
/** Scales the catalog fills in when the instrument is a standard one. */
const SCALES: Record<string, [number, number]> = { esas_r: [0, 10], pro_ctcae: [0, 4], ctcae: [0, 5], custom: [0, 10] };
/** The PRO-CTCAE axes and adverse-event annotations of a reported symptom, kept as sent. */
const ATTRIBUTES = [
  "frequency", "interference", "relatedness_to_treatment", "onset_date", "resolution_date", "resolution_status",
  "action_taken", "seriousness", "suspected_agent", "requires_hospitalization",
] as const satisfies readonly (keyof LogPayloads["symptom_report"]["symptoms"][number])[];

const REPORT_FIELDS = ["name", "snomed_code", "meddra_code", "type", "scale_min", "scale_max"] as const;
const ATTRIBUTE_TREE = ["attributes"] as const;

const identityOf = (e: Pick<Symptom, "snomed_code" | "meddra_code" | "name" | "aliases">): Identity => ({
  codes: [e.snomed_code, e.meddra_code],
  name: e.name,
  aliases: e.aliases,
});

/** The current values come from the latest report by event time, not the last one applied. */
function settle(e: Symptom): Symptom {
  const latest = last(e.history) as SymptomReport;
  return { ...e, current_score: latest.score, instrument: latest.instrument, status: latest.score === 0 ? "resolved" : "active" };
}

/** Moves pending details that match `e` into it (a detail sent before its symptom's first report). */
function adopt(doc: SymptomsDoc, symptoms: Symptom[], at: number): SymptomsDoc {
  const e = symptoms[at];
  if (e === undefined) return { ...doc, symptoms };
  const matches = (d: PendingDetail) => findByIdentity([e], { codes: [d.snomed_code, d.meddra_code], name: d.symptom_type }, identityOf) === 0;
  const mine = doc.pending_details.filter(matches);
  if (mine.length === 0) return { ...doc, symptoms };
  let adopted = e;
  for (const d of mine) {
    adopted = {
      ...adopted,
      details: insertSorted(adopted.details, { timestamp: d.timestamp, log_id: d.log_id, detail_type: d.detail_type, question: d.question, response: d.response }, DETAILS),
      sources: insertSorted(adopted.sources, { source: d.source, log_id: d.log_id, timestamp: d.timestamp }, SOURCES),
    };
  }
  return { ...doc, symptoms: replaceAt(symptoms, at, adopted), pending_details: doc.pending_details.filter((d) => !matches(d)) };
}

function applyReport(s: ModuleState<SymptomsDoc>, log: LogOf<"symptom_report">): ModuleState<SymptomsDoc> {
  const instrument = text(log.payload.instrument) ?? "custom";
  let doc = s.doc;
  let clocks = s.clocks;
  for (const item of items(log.payload.symptoms)) {
    const name = text(item.name);
    const score = finite(item.score);
    if (name === undefined || score === undefined) continue;
    const snomed_code = text(item.snomed_code) ?? null;
    const meddra_code = text(item.meddra_code) ?? null;
    const [min, max] = SCALES[instrument] ?? [null, null];
    const attributes: Obj = {};
    for (const k of ATTRIBUTES) if (item[k] !== undefined) attributes[k] = item[k];
    // Literals, not `{ ...probe, more }`: see "Writing reducers that stay fast" in readmodels/README.md.
    // A code the report leaves out stays as the entry learned it (undefined is "not given"):
    // nulled, the next report naming only that code would no longer find the entry.
    const patch = {
      name, snomed_code: snomed_code ?? undefined, meddra_code: meddra_code ?? undefined, type: text(item.type), scale_min: finite(item.scale_min) ?? min, scale_max: finite(item.scale_max) ?? max,
      attributes, extensions: itemExtensions(log.payload, item),
    };
    const before = doc.symptoms.length;
    const r = applyLifecycle<Symptom, SymptomReport>({
      list: doc.symptoms, clocks, ns: "symptoms", log, item: patch, probe: { codes: [snomed_code, meddra_code], name }, identityOf,
      fields: REPORT_FIELDS, treeFields: ATTRIBUTE_TREE, settle, aliases: true,
      blank: { name, snomed_code, meddra_code, aliases: [], status: "active", current_score: score, instrument, type: null, scale_min: null, scale_max: null, attributes: {}, details: [] },
      history: { timestamp: log.timestamp, score, instrument, log_id: log.id },
    });
    clocks = r.clocks;
    doc = r.list.length > before ? adopt(doc, [...r.list], r.list.length - 1) : { ...doc, symptoms: [...r.list] };
  }
  return withDoc(s, doc, clocks);
}

function applyDetail(s: ModuleState<SymptomsDoc>, log: LogOf<"symptom_detail">): ModuleState<SymptomsDoc> {
  const p = log.payload;
  const symptom_type = text(p.symptom_type);
  const detail_type = text(p.detail_type);
  const response = text(p.response);
  if (symptom_type === undefined || detail_type === undefined || response === undefined) return s;
  const detail = { timestamp: log.timestamp, log_id: log.id, detail_type, question: text(p.question) ?? null, response };
  const codes = { snomed_code: text(p.snomed_code) ?? null, meddra_code: text(p.meddra_code) ?? null };
  const at = findByIdentity(s.doc.symptoms, { codes: [codes.snomed_code, codes.meddra_code], name: symptom_type }, identityOf);
  const e = at >= 0 ? s.doc.symptoms[at] : undefined;
  if (e === undefined) {
    const pending: PendingDetail = { ...detail, symptom_type, ...codes, source: p.source ?? null };
    return withDoc(s, { ...s.doc, pending_details: insertSorted(s.doc.pending_details, pending, HISTORY) });
  }
  const next = { ...e, details: insertSorted(e.details, detail, DETAILS), sources: addSource(e.sources, log) };
  return withDoc(s, { ...s.doc, symptoms: replaceAt(s.doc.symptoms, at, next) });
}

function applyFreeText(s: ModuleState<SymptomsDoc>, log: LogOf<"symptom_free_text">): ModuleState<SymptomsDoc> {
  const said = text(log.payload.text);
  if (said === undefined) return s;
  const associated_symptoms = items(log.payload.associated_symptoms).flatMap((a) => {
    const name = text(a.name);
    return name === undefined ? [] : [{ name, snomed_code: text(a.snomed_code) ?? null, meddra_code: text(a.meddra_code) ?? null }];
  });
  const report = { timestamp: log.timestamp, log_id: log.id, text: said, associated_symptoms, source: log.payload.source ?? null };
  return withDoc(s, { ...s.doc, free_text: insertSorted(s.doc.free_text, report, FREE_TEXT) });
}

function applyMetric(s: ModuleState<SymptomsDoc>, log: LogOf<"health_metric">): ModuleState<SymptomsDoc> {
  const p = log.payload;
  const metric_type = text(p.metric_type);
  const score = finite(p.score);
  if (metric_type === undefined || score === undefined) return s;
  const reading: MetricReading = {
    timestamp: log.timestamp, log_id: log.id, score, scale_min: finite(p.scale_min) ?? null, scale_max: finite(p.scale_max) ?? null,
  };
  const at = s.doc.health_metrics.findIndex((m) => normName(m.metric_type) === normName(metric_type));
  const prev = at >= 0 ? s.doc.health_metrics[at] : undefined;
  const history = insertSorted(prev?.history ?? [], reading, HISTORY);
  const latest = last(history) as MetricReading;
  const ext = mergeExtensions(prev?.extensions ?? {}, s.clocks, ["health_metrics", normName(metric_type)], itemExtensions(p, p), log.timestamp);
  const metric: HealthMetric = {
    metric_type: prev?.metric_type ?? metric_type, latest, history, extensions: ext.extensions, sources: addSource(prev?.sources, log),
  };
  return withDoc(s, { ...s.doc, health_metrics: replaceAt(s.doc.health_metrics, at, metric) }, ext.clocks);
}

export const handles = ["symptom_report", "symptom_detail", "symptom_free_text", "health_metric"] as const;

export const symptoms: ReadModel<"symptoms", SymptomsDoc, (typeof handles)[number]> = {
  key: "symptoms",
  kind: "event",
  version: 5,
  handles,
  reads: [],
  initial: () => ({ symptoms: [], pending_details: [], free_text: [], health_metrics: [] }),
  evolve: (s, log) => {
    switch (log.log_type) {
      case "symptom_detail":
        return applyDetail(s, log);
      case "symptom_free_text":
        return applyFreeText(s, log);
      case "health_metric":
        return applyMetric(s, log);
      case "symptom_report":
        return applyReport(s, log);
      default: {
        const unhandled: never = log;
        void unhandled;
        return s;
      }
    }
  },
};
