import type { LogType } from "../../../catalog/log-types.js";
import type { LogRecord } from "../../log-record.js";
import { addSource, HISTORY, insertSorted, last, RECENT, replaceAt } from "../../lib/lists.js";
import { bool, firstStr, normName, num, obj, objs, str, strs, without, type Obj } from "../../lib/payload.js";
import { cmpStamped, utcInstant } from "../../lib/time.js";
import type { ModuleState, ReadModel } from "../../module.js";
import { itemExtensions, mergeExtensions } from "../../lib/extensions.js";
import type { ClinicalContextDoc, FunctionalReading, Measurement, MeasurementValue, Note, OpenItem } from "./types.js";

export type * from "./types.js";

const NOTES = 20;
type Doc = ClinicalContextDoc;
/** Series and keyed entries merge their extensions under write clocks; the other handlers keep `clocks` as is. */
type State = ModuleState<Doc>;
const s_ = (o: Obj, k: string) => str(o, k) ?? null;
/** A point-in-time item's provenance as sent: its own source, else the payload's; the payload's extensions under its own. */
const sourceOf = (p: Obj, item: Obj): unknown => item.source ?? p.source ?? null;
const extensionsOf = (p: Obj, item: Obj): Obj => itemExtensions(p, item) ?? {};

function note({ doc: d, clocks }: State, log: LogRecord, p: Obj): State {
  const sections = objs(p, "sections").flatMap((x) => {
    const section_label = str(x, "section_label");
    const content = typeof x.content === "string" ? x.content : undefined;
    return section_label !== undefined && content !== undefined ? [{ section_label, content }] : [];
  });
  // Kept as sent: fields this service does not model stay beside the normalized ones.
  const n: Note = Object.assign({}, p, {
    timestamp: log.timestamp, log_id: log.id, note_type: s_(p, "note_type"), loinc_code: s_(p, "loinc_code"),
    authored_by: obj(p, "authored_by") ?? null, authored_date: s_(p, "authored_date"), encounter_id: s_(p, "encounter_id"),
    sections, source: p.source ?? null, extensions: obj(p, "extensions") ?? {},
  });
  return { doc: { ...d, notes: insertSorted(d.notes, n, NOTES) }, clocks };
}

function findings({ doc: d, clocks }: State, log: LogRecord, p: Obj): State {
  let list = d.findings;
  for (const f of objs(p, "findings")) {
    const description = str(f, "description");
    if (description === undefined) continue;
    list = insertSorted(list, {
      timestamp: log.timestamp, log_id: log.id, description, body_site: s_(f, "body_site"), severity: s_(f, "severity"),
      negation: bool(f, "negation") ?? null, recorded_at: s_(f, "recorded_at"), source: sourceOf(p, f), extensions: extensionsOf(p, f),
    }, RECENT);
  }
  return { doc: { ...d, findings: list }, clocks };
}

function imaging({ doc: d, clocks }: State, log: LogRecord, p: Obj): State {
  let list = d.imaging;
  for (const f of objs(p, "findings")) {
    const modality = str(f, "modality");
    if (modality === undefined) continue;
    list = insertSorted(list, {
      timestamp: log.timestamp, log_id: log.id, modality, body_region: s_(f, "body_region"), impression: s_(f, "impression"),
      finding_description: s_(f, "finding_description"), performed_at: s_(f, "performed_at"), study_date: s_(p, "study_date"),
      source: sourceOf(p, f), extensions: extensionsOf(p, f),
    }, RECENT);
  }
  return { doc: { ...d, imaging: list }, clocks };
}

const variantKey = (gene: string, designation: string | null) => `${normName(gene)}|${normName(designation ?? "")}`;

function variants({ doc: d, clocks }: State, log: LogRecord, p: Obj): State {
  let list = d.genomic_variants;
  for (const v of objs(p, "variants")) {
    const gene = str(v, "gene");
    if (gene === undefined) continue;
    const variant_designation = s_(v, "variant_designation");
    const key = variantKey(gene, variant_designation);
    const at = list.findIndex((x) => variantKey(x.gene, x.variant_designation) === key);
    const prev = at >= 0 ? list[at] : undefined;
    // The fields are the latest report's; extensions and sources gather from every report.
    const ext = mergeExtensions(prev?.extensions ?? {}, clocks, ["genomic_variants", key], itemExtensions(p, v), log.timestamp);
    clocks = ext.clocks;
    const sources = addSource(prev?.sources, log, v.source);
    const report = {
      timestamp: log.timestamp, log_id: log.id, gene, variant_designation,
      variant_type: s_(v, "variant_type"), classification: s_(v, "classification"), actionability: s_(v, "actionability"),
      reported_at: s_(v, "reported_at"), extensions: ext.extensions, sources,
    };
    // A newer report of it is already here: it stays, with this report's provenance added.
    const next = prev && cmpStamped(prev, report) > 0 ? { ...prev, extensions: ext.extensions, sources } : report;
    list = replaceAt(list, at, next);
  }
  return { doc: { ...d, genomic_variants: list }, clocks };
}

function measurements({ doc: d, clocks }: State, log: LogRecord, p: Obj): State {
  let list = d.measurements;
  for (const m of objs(p, "measurements")) {
    const measurement_type = str(m, "measurement_type");
    if (measurement_type === undefined) continue;
    const code_system = s_(m, "code_system");
    const code = s_(m, "code");
    const body_site = s_(m, "body_site");
    const keyOf = (x: Pick<Measurement, "code_system" | "code" | "measurement_type" | "body_site">) =>
      `${x.code ? `${x.code_system ?? ""}|${x.code}` : normName(x.measurement_type)}@${normName(x.body_site ?? "")}`;
    const key = keyOf({ code_system, code, measurement_type, body_site });
    const at = list.findIndex((x) => keyOf(x) === key);
    const prev = at >= 0 ? list[at] : undefined;
    const given = s_(m, "measured_at");
    const measured_at = given === null ? null : utcInstant(given);
    const value: MeasurementValue = {
      timestamp: measured_at ?? log.timestamp, log_id: log.id, value_numeric: num(m, "value_numeric") ?? null,
      value_string: s_(m, "value_string"), unit: s_(m, "unit"), measured_at,
    };
    const history = insertSorted(prev?.history ?? [], value, HISTORY);
    const ext = mergeExtensions(prev?.extensions ?? {}, clocks, ["measurements", key], itemExtensions(p, m), log.timestamp);
    clocks = ext.clocks;
    list = replaceAt(list, at, {
      measurement_type, code_system, code, body_site, latest: last(history) as MeasurementValue, history,
      extensions: ext.extensions, sources: addSource(prev?.sources, log, m.source),
    });
  }
  return { doc: { ...d, measurements: list }, clocks };
}

function responses({ doc: d, clocks }: State, log: LogRecord, p: Obj): State {
  let list = d.treatment_responses;
  for (const a of objs(p, "assessments")) {
    const response_category = str(a, "response_category");
    if (response_category === undefined) continue;
    list = insertSorted(list, {
      timestamp: log.timestamp, log_id: log.id, response_category, treatment_description: s_(a, "treatment_description"),
      assessment_method: s_(a, "assessment_method"), reference_date: s_(a, "reference_date"),
      details: without(a, ["response_category", "treatment_description", "assessment_method", "reference_date", "source", "extensions"]),
      source: sourceOf(p, a), extensions: extensionsOf(p, a),
    }, RECENT);
  }
  return { doc: { ...d, treatment_responses: list }, clocks };
}

function functional({ doc: d, clocks }: State, log: LogRecord, p: Obj): State {
  const instrument = str(p, "instrument");
  const cls = num(p, "class");
  if (instrument === undefined || cls === undefined) return { doc: d, clocks };
  const reading: FunctionalReading = {
    timestamp: log.timestamp, log_id: log.id, class: cls, reported_by: s_(p, "reported_by"),
    assessment_type: s_(p, "assessment_type"), assessor_type: s_(p, "assessor_type"), domain: s_(p, "domain"),
    narrative: s_(p, "narrative"), functional_limitations: strs(p, "functional_limitations") ?? null,
    change_from_prior: obj(p, "change_from_prior") ?? null,
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

/** Id fields that make an open item replaceable, per type (first present wins). */
const OPEN: Record<string, { list: keyof Doc; ids: string[] }> = {
  care_encounter: { list: "encounters", ids: ["encounter_id", "id"] },
  clinical_plan_item: { list: "plan_items", ids: ["plan_item_id", "item_id", "id"] },
  care_goal: { list: "goals", ids: ["goal_id", "id"] },
  care_action: { list: "care_actions", ids: ["action_id", "id"] },
  unstructured_report: { list: "reports", ids: ["report_id", "document_id", "id"] },
};

function open(s: State, log: LogRecord, p: Obj): State {
  const d = s.doc;
  const spec = OPEN[log.log_type];
  const key = firstStr(p, spec.ids) ?? null;
  const item: OpenItem = { ...p, timestamp: log.timestamp, log_id: log.id, key };
  let list = d[spec.list] as OpenItem[];
  const at = key === null ? -1 : list.findIndex((x) => x.key === key);
  if (at >= 0) {
    if (cmpStamped(list[at], item) > 0) return s;
    list = list.filter((_, i) => i !== at);
  }
  // A status of entered_in_error withdraws the item (the designed types' correction).
  if (p.status === "entered_in_error") return at >= 0 ? { ...s, doc: { ...d, [spec.list]: list } } : s;
  return { ...s, doc: { ...d, [spec.list]: insertSorted(list, item, RECENT) } };
}

const HANDLERS = {
  clinical_note: note, clinical_finding: findings, imaging_result: imaging, genomic_variant: variants,
  clinical_measurement: measurements, treatment_response_assessment: responses, functional_class: functional,
  care_encounter: open, clinical_plan_item: open, care_goal: open, care_action: open, unstructured_report: open,
} satisfies Partial<Record<LogType, (s: State, log: LogRecord, p: Obj) => State>>;

export const handles = Object.keys(HANDLERS) as (keyof typeof HANDLERS)[];

export const clinicalContext: ReadModel<"clinical_context", ClinicalContextDoc> = {
  key: "clinical_context",
  kind: "event",
  version: 3,
  handles,
  reads: [],
  initial: () => ({
    notes: [], findings: [], imaging: [], genomic_variants: [], measurements: [], treatment_responses: [],
    functional_status: [], encounters: [], plan_items: [], goals: [], care_actions: [], reports: [],
  }),
  evolve: (s, log) => {
    const handler = (HANDLERS as Partial<Record<LogType, (s: State, log: LogRecord, p: Obj) => State>>)[log.log_type];
    if (!handler) return s;
    const next = handler(s, log, log.payload);
    // Handlers rebuild the document even when no item was usable; keep the old one then.
    const same = next.clocks === s.clocks && (Object.keys(next.doc) as (keyof Doc)[]).every((k) => next.doc[k] === s.doc[k]);
    return same ? s : next;
  },
};
