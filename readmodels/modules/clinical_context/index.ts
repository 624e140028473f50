import type { LogOf, TypedLog } from "../../log-record.js";
import { addSource, HISTORY, insertSorted, last, RECENT, replaceAt } from "../../lib/lists.js";
import { extra, finite, firstStr, items, normName, record, text, texts, truth, without, type Obj } from "../../lib/payload.js";
import { cmpStamped, utcInstant } from "../../lib/time.js";
import type { ModuleState, ReadModel } from "../../module.js";
import { itemExtensions, mergeExtensions } from "../../lib/extensions.js";
import type { ClinicalContextDoc, FunctionalReading, Measurement, MeasurementValue, Note, OpenItem } from "./types.js";

export type * from "./types.js";

const NOTES = 20;
type Doc = ClinicalContextDoc;
/** Series and keyed entries merge their extensions under write clocks; the other handlers keep `clocks` as is. */
type State = ModuleState<Doc>;
/** A text field, null when absent or blank. Enum fields too take any text: a log stored under an older catalog keeps its own value. */
const t_ = (v: string | null | undefined) => text(v) ?? null;
/**
 * A point-in-time item's provenance as sent: its own source, else the payload's; the
 * payload's extensions under its own. An item's `source` is not a catalog field of these
 * types, but one a client sends is kept, so it is read by key.
 */
const sourceOf = (p: Obj, item: object): unknown => extra(item, "source") ?? p.source ?? null;
const extensionsOf = (p: Obj, item: Obj): Obj => itemExtensions(p, item) ?? {};

function note({ doc: d, clocks }: State, log: LogOf<"clinical_note">): State {
  const p = log.payload;
  const sections = items(p.sections).flatMap((x) => {
    const section_label = text(x.section_label);
    // The content as written, even blank.
    const content = typeof x.content === "string" ? x.content : undefined;
    return section_label !== undefined && content !== undefined ? [{ section_label, content }] : [];
  });
  // Kept as sent: fields this service does not model stay beside the normalized ones.
  const n: Note = Object.assign({}, p, {
    timestamp: log.timestamp, log_id: log.id, note_type: t_(p.note_type), loinc_code: t_(p.loinc_code),
    authored_by: record(p.authored_by) ?? null, authored_date: t_(p.authored_date), encounter_id: t_(p.encounter_id),
    sections, source: p.source ?? null, extensions: record(p.extensions) ?? {},
  });
  return { doc: { ...d, notes: insertSorted(d.notes, n, NOTES) }, clocks };
}

function findings({ doc: d, clocks }: State, log: LogOf<"clinical_finding">): State {
  const p = log.payload;
  let list = d.findings;
  for (const f of items(p.findings)) {
    const description = text(f.description);
    if (description === undefined) continue;
    list = insertSorted(list, {
      timestamp: log.timestamp, log_id: log.id, description, body_site: t_(f.body_site), severity: t_(f.severity),
      negation: truth(f.negation) ?? null, recorded_at: t_(f.recorded_at), source: sourceOf(p, f), extensions: extensionsOf(p, f),
    }, RECENT);
  }
  return { doc: { ...d, findings: list }, clocks };
}

function imaging({ doc: d, clocks }: State, log: LogOf<"imaging_result">): State {
  const p = log.payload;
  let list = d.imaging;
  for (const f of items(p.findings)) {
    const modality = text(f.modality);
    if (modality === undefined) continue;
    list = insertSorted(list, {
      timestamp: log.timestamp, log_id: log.id, modality, body_region: t_(f.body_region), impression: t_(f.impression),
      finding_description: t_(f.finding_description), performed_at: t_(f.performed_at), study_date: t_(p.study_date),
      source: sourceOf(p, f), extensions: extensionsOf(p, f),
    }, RECENT);
  }
  return { doc: { ...d, imaging: list }, clocks };
}

const variantKey = (gene: string, designation: string | null) => `${normName(gene)}|${normName(designation ?? "")}`;

function variants({ doc: d, clocks }: State, log: LogOf<"genomic_variant">): State {
  const p = log.payload;
  let list = d.genomic_variants;
  for (const v of items(p.variants)) {
    const gene = text(v.gene);
    if (gene === undefined) continue;
    const variant_designation = t_(v.variant_designation);
    const key = variantKey(gene, variant_designation);
    const at = list.findIndex((x) => variantKey(x.gene, x.variant_designation) === key);
    const prev = at >= 0 ? list[at] : undefined;
    // The fields are the latest report's; extensions and sources gather from every report.
    const ext = mergeExtensions(prev?.extensions ?? {}, clocks, ["genomic_variants", key], itemExtensions(p, v), log.timestamp);
    clocks = ext.clocks;
    const sources = addSource(prev?.sources, log, extra(v, "source"));
    const report = {
      timestamp: log.timestamp, log_id: log.id, gene, variant_designation,
      variant_type: t_(v.variant_type), classification: t_(v.classification), actionability: t_(v.actionability),
      reported_at: t_(v.reported_at), extensions: ext.extensions, sources,
    };
    // A newer report of it is already here: it stays, with this report's provenance added.
    const next = prev && cmpStamped(prev, report) > 0 ? { ...prev, extensions: ext.extensions, sources } : report;
    list = replaceAt(list, at, next);
  }
  return { doc: { ...d, genomic_variants: list }, clocks };
}

function measurements({ doc: d, clocks }: State, log: LogOf<"clinical_measurement">): State {
  const p = log.payload;
  let list = d.measurements;
  for (const m of items(p.measurements)) {
    const measurement_type = text(m.measurement_type);
    if (measurement_type === undefined) continue;
    const code_system = t_(m.code_system);
    const code = t_(m.code);
    const body_site = t_(m.body_site);
    const keyOf = (x: Pick<Measurement, "code_system" | "code" | "measurement_type" | "body_site">) =>
      `${x.code ? `${x.code_system ?? ""}|${x.code}` : normName(x.measurement_type)}@${normName(x.body_site ?? "")}`;
    const key = keyOf({ code_system, code, measurement_type, body_site });
    const at = list.findIndex((x) => keyOf(x) === key);
    const prev = at >= 0 ? list[at] : undefined;
    const given = t_(m.measured_at);
    const measured_at = given === null ? null : utcInstant(given);
    const value: MeasurementValue = {
      timestamp: measured_at ?? log.timestamp, log_id: log.id, value_numeric: finite(m.value_numeric) ?? null,
      value_string: t_(m.value_string), unit: t_(m.unit), measured_at,
    };
    const history = insertSorted(prev?.history ?? [], value, HISTORY);
    const ext = mergeExtensions(prev?.extensions ?? {}, clocks, ["measurements", key], itemExtensions(p, m), log.timestamp);
    clocks = ext.clocks;
    list = replaceAt(list, at, {
      measurement_type, code_system, code, body_site, latest: last(history) as MeasurementValue, history,
      extensions: ext.extensions, sources: addSource(prev?.sources, log, extra(m, "source")),
    });
  }
  return { doc: { ...d, measurements: list }, clocks };
}

function responses({ doc: d, clocks }: State, log: LogOf<"treatment_response_assessment">): State {
  const p = log.payload;
  let list = d.treatment_responses;
  for (const a of items(p.assessments)) {
    const response_category = text(a.response_category);
    if (response_category === undefined) continue;
    list = insertSorted(list, {
      timestamp: log.timestamp, log_id: log.id, response_category, treatment_description: t_(a.treatment_description),
      assessment_method: t_(a.assessment_method), reference_date: t_(a.reference_date),
      details: without(a, ["response_category", "treatment_description", "assessment_method", "reference_date", "source", "extensions"]),
      source: sourceOf(p, a), extensions: extensionsOf(p, a),
    }, RECENT);
  }
  return { doc: { ...d, treatment_responses: list }, clocks };
}

function functional({ doc: d, clocks }: State, log: LogOf<"functional_class">): State {
  const p = log.payload;
  const instrument = text(p.instrument);
  const cls = finite(p.class);
  if (instrument === undefined || cls === undefined) return { doc: d, clocks };
  const reading: FunctionalReading = {
    timestamp: log.timestamp, log_id: log.id, class: cls, reported_by: t_(p.reported_by),
    assessment_type: t_(p.assessment_type), assessor_type: t_(p.assessor_type), domain: t_(p.domain),
    narrative: t_(p.narrative), functional_limitations: texts(p.functional_limitations) ?? null,
    change_from_prior: record(p.change_from_prior) ?? null,
  };
  const at = d.functional_status.findIndex((f) => normName(f.instrument) === normName(instrument));
  const prev = at >= 0 ? d.functional_status[at] : undefined;
  const history = insertSorted(prev?.history ?? [], reading, HISTORY);
  const ext = mergeExtensions(prev?.extensions ?? {}, clocks, ["functional_status", normName(instrument)], itemExtensions(p, p), log.timestamp);
  const entry = {
    instrument: prev?.instrument ?? instrument, latest: last(history) as FunctionalReading, history,
    extensions: ext.extensions, sources: addSource(prev?.sources, log),
  };
  return { doc: { ...d, functional_status: replaceAt(d.functional_status, at, entry) }, clocks: ext.clocks };
}

type OpenType = "care_encounter" | "clinical_plan_item" | "care_goal" | "care_action" | "unstructured_report";

/**
 * Id fields that make an open item replaceable, per type (first present wins): the
 * catalog's id field, then other names clients send an id under (the spec leaves these
 * shapes open), which the catalog does not name; so the id is read by key.
 */
const OPEN: Record<OpenType, { list: keyof Doc; ids: string[] }> = {
  care_encounter: { list: "encounters", ids: ["encounter_id", "id"] },
  clinical_plan_item: { list: "plan_items", ids: ["plan_item_id", "item_id", "id"] },
  care_goal: { list: "goals", ids: ["goal_id", "id"] },
  care_action: { list: "care_actions", ids: ["action_id", "id"] },
  unstructured_report: { list: "reports", ids: ["report_id", "document_id", "id"] },
};

/** The item is the payload as sent, whatever its fields, so it is read as an open object. */
function open(s: State, log: TypedLog<OpenType>): State {
  const d = s.doc;
  const p: Obj = log.payload;
  const spec = OPEN[log.log_type];
  const key = firstStr(p, spec.ids) ?? null;
  const item: OpenItem = { ...p, timestamp: log.timestamp, log_id: log.id, key };
  let list = d[spec.list] as OpenItem[];
  const at = key === null ? -1 : list.findIndex((x) => x.key === key);
  if (at >= 0) {
    if (cmpStamped(list[at]!, item) > 0) return s;
    list = list.filter((_, i) => i !== at);
  }
  // A status of entered_in_error withdraws the item (the designed types' correction); a
  // goal says it in its lifecycle_status.
  if (p.status === "entered_in_error" || p.lifecycle_status === "entered_in_error") return at >= 0 ? { ...s, doc: { ...d, [spec.list]: list } } : s;
  return { ...s, doc: { ...d, [spec.list]: insertSorted(list, item, RECENT) } };
}

export const handles = [
  "clinical_note", "clinical_finding", "imaging_result", "genomic_variant", "clinical_measurement", "treatment_response_assessment",
  "functional_class", "care_encounter", "clinical_plan_item", "care_goal", "care_action", "unstructured_report",
] as const;

function apply(s: State, log: TypedLog<(typeof handles)[number]>): State {
  switch (log.log_type) {
    case "clinical_note":
      return note(s, log);
    case "clinical_finding":
      return findings(s, log);
    case "imaging_result":
      return imaging(s, log);
    case "genomic_variant":
      return variants(s, log);
    case "clinical_measurement":
      return measurements(s, log);
    case "treatment_response_assessment":
      return responses(s, log);
    case "functional_class":
      return functional(s, log);
    default:
      return open(s, log);
  }
}

export const clinicalContext: ReadModel<"clinical_context", ClinicalContextDoc, (typeof handles)[number]> = {
  key: "clinical_context",
  kind: "event",
  version: 4,
  handles,
  reads: [],
  initial: () => ({
    notes: [], findings: [], imaging: [], genomic_variants: [], measurements: [], treatment_responses: [],
    functional_status: [], encounters: [], plan_items: [], goals: [], care_actions: [], reports: [],
  }),
  evolve: (s, log) => {
    const next = apply(s, log);
    // Handlers rebuild the document even when no item was usable; keep the old one then.
    const same = next.clocks === s.clocks && (Object.keys(next.doc) as (keyof Doc)[]).every((k) => next.doc[k] === s.doc[k]);
    return same ? s : next;
  },
};
