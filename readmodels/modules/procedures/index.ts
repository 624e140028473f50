import { utcInstant } from "../../lib/time.js";
import type { LogPayloads } from "../../../catalog/payloads.js";
import type { LogOf } from "../../log-record.js";
import { applyOpen, itemsOf, type OpenEntry } from "../../lib/open-entries.js";
import { extra, finite, firstStr, items, normName, text, type Obj } from "../../lib/payload.js";
import { withDoc, type ModuleState, type ReadModel } from "../../module.js";
import { itemExtensions } from "../../lib/extensions.js";

/** key: `<procedure_code, else normalized name>@<performed date>` (one entry per procedure performed; a repeat on another day is another entry). status entered_in_error withdraws it. */
export interface Procedure extends OpenEntry {
  name: string | null;
  code: string | null;
  code_system: string | null;
  status: string | null;
  /** ISO 8601; the log's timestamp when the payload has none. */
  performed_at: string | null;
  body_site: string | null;
}

/** key: `<procedure_code, else loinc_code, else normalized test_name>@<performed_at>`. */
export interface ProcedureResult extends OpenEntry {
  result_type: string | null;
  test_name: string | null;
  loinc_code: string | null;
  procedure_code: string | null;
  value_numeric: number | null;
  value_string: string | null;
  unit: string | null;
  specimen_site: string | null;
  status: string | null;
  performed_at: string | null;
}

/** Procedures performed (`procedure`) and their pathology or procedure results (`procedure_result`). */
export interface ProceduresDoc {
  procedures: Procedure[];
  results: ProcedureResult[];
}

const NAME = ["procedure_name", "name", "display", "description", "procedure_description"];
const CODE = ["procedure_code", "code", "cpt_code", "snomed_code"];
const WHEN = ["performed_at", "performed_date", "procedure_date", "date", "start_datetime"];

/**
 * A procedure as a log sends it: the payload, or each item of a `procedures` list (a form
 * the catalog does not name, which stored logs may hold), read by the same names.
 */
type ProcedureItem = Obj & Partial<LogPayloads["procedure"]>;

/**
 * The catalog's design names procedure_name, procedure_code and performed_date; the other
 * names of NAME, CODE and WHEN are read too (see README), so those lists are read by key.
 */
function applyProcedure(s: ModuleState<ProceduresDoc>, log: LogOf<"procedure">): ModuleState<ProceduresDoc> {
  let list: readonly Procedure[] = s.doc.procedures;
  let clocks = s.clocks;
  for (const item of itemsOf(log.payload, ["procedures"]) as ProcedureItem[]) {
    const name = firstStr(item, NAME) ?? null;
    const code = firstStr(item, CODE) ?? null;
    if (!name && !code) continue;
    const performed_at = firstStr(item, WHEN) ?? log.timestamp;
    const key = `${code ?? normName(name ?? "")}@${performed_at.slice(0, 10)}`;
    ({ list, clocks } = applyOpen<Procedure>({
      list, clocks, ns: "procedures", key, item, log,
      consumed: [...NAME, ...CODE, ...WHEN, "code_system", "status", "body_site"],
      fields: {
        name, code, code_system: text(item.code_system) ?? null, status: text(item.status) ?? null, performed_at,
        body_site: text(item.body_site) ?? null,
      },
    }));
  }
  return withDoc(s, list === s.doc.procedures ? s.doc : { ...s.doc, procedures: [...list] }, clocks);
}

function applyResult(s: ModuleState<ProceduresDoc>, log: LogOf<"procedure_result">): ModuleState<ProceduresDoc> {
  let list: readonly ProcedureResult[] = s.doc.results;
  let clocks = s.clocks;
  const p = log.payload;
  for (const r of items(p.results)) {
    const test_name = text(r.test_name) ?? null;
    const loinc_code = text(r.loinc_code) ?? null;
    const procedure_code = text(r.procedure_code) ?? null;
    if (!test_name && !loinc_code && !procedure_code) continue;
    const given = text(r.performed_at) ?? text(p.collection_datetime);
    const performed_at = given === undefined ? log.timestamp : utcInstant(given);
    const key = `${procedure_code ?? loinc_code ?? normName(test_name ?? "")}@${performed_at}`;
    const fields = {
      result_type: text(r.result_type) ?? null, test_name, loinc_code, procedure_code,
      value_numeric: finite(r.value_numeric) ?? null, value_string: text(r.value_string) ?? null,
      unit: text(r.unit) ?? null, specimen_site: text(r.specimen_site) ?? null, status: text(r.status) ?? null,
      performed_at,
    };
    // A result's own `source` is not a catalog field, but kept when sent, and preferred.
    ({ list, clocks } = applyOpen<ProcedureResult>({
      list, clocks, ns: "results", key, log, fields, consumed: Object.keys(fields),
      item: { ...r, source: extra(r, "source") ?? p.source, extensions: itemExtensions(p, r) },
    }));
  }
  return withDoc(s, list === s.doc.results ? s.doc : { ...s.doc, results: [...list] }, clocks);
}

export const handles = ["procedure", "procedure_result"] as const;

export const procedures: ReadModel<"procedures", ProceduresDoc, (typeof handles)[number]> = {
  key: "procedures",
  kind: "stable",
  version: 3,
  handles,
  reads: [],
  initial: () => ({ procedures: [], results: [] }),
  evolve: (s, log) => (log.log_type === "procedure" ? applyProcedure(s, log) : applyResult(s, log)),
};
