import { utcInstant } from "../../lib/time.js";
import type { LogType } from "../../../catalog/log-types.js";
import type { LogRecord } from "../../log-record.js";
import { applyOpen, itemsOf, type OpenEntry } from "../../lib/open-entries.js";
import { firstStr, normName, num, objs, str } from "../../lib/payload.js";
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

function applyProcedure(s: ModuleState<ProceduresDoc>, log: LogRecord): ModuleState<ProceduresDoc> {
  let list: readonly Procedure[] = s.doc.procedures;
  let clocks = s.clocks;
  for (const item of itemsOf(log.payload, ["procedures"])) {
    const name = firstStr(item, NAME) ?? null;
    const code = firstStr(item, CODE) ?? null;
    if (!name && !code) continue;
    const performed_at = firstStr(item, WHEN) ?? log.timestamp;
    const key = `${code ?? normName(name ?? "")}@${performed_at.slice(0, 10)}`;
    ({ list, clocks } = applyOpen<Procedure>({
      list, clocks, ns: "procedures", key, item, log,
      consumed: [...NAME, ...CODE, ...WHEN, "code_system", "status", "body_site"],
      fields: {
        name, code, code_system: str(item, "code_system") ?? null, status: str(item, "status") ?? null, performed_at,
        body_site: str(item, "body_site") ?? null,
      },
    }));
  }
  return withDoc(s, list === s.doc.procedures ? s.doc : { ...s.doc, procedures: [...list] }, clocks);
}

function applyResult(s: ModuleState<ProceduresDoc>, log: LogRecord): ModuleState<ProceduresDoc> {
  let list: readonly ProcedureResult[] = s.doc.results;
  let clocks = s.clocks;
  for (const r of objs(log.payload, "results")) {
    const test_name = str(r, "test_name") ?? null;
    const loinc_code = str(r, "loinc_code") ?? null;
    const procedure_code = str(r, "procedure_code") ?? null;
    if (!test_name && !loinc_code && !procedure_code) continue;
    const given = str(r, "performed_at") ?? str(log.payload, "collection_datetime");
    const performed_at = given === undefined ? log.timestamp : utcInstant(given);
    const key = `${procedure_code ?? loinc_code ?? normName(test_name ?? "")}@${performed_at}`;
    const fields = {
      result_type: str(r, "result_type") ?? null, test_name, loinc_code, procedure_code,
      value_numeric: num(r, "value_numeric") ?? null, value_string: str(r, "value_string") ?? null,
      unit: str(r, "unit") ?? null, specimen_site: str(r, "specimen_site") ?? null, status: str(r, "status") ?? null,
      performed_at,
    };
    ({ list, clocks } = applyOpen<ProcedureResult>({
      list, clocks, ns: "results", key, log, fields, consumed: Object.keys(fields),
      item: { ...r, source: r.source ?? log.payload.source, extensions: itemExtensions(log.payload, r) },
    }));
  }
  return withDoc(s, list === s.doc.results ? s.doc : { ...s.doc, results: [...list] }, clocks);
}

export const handles: readonly LogType[] = ["procedure", "procedure_result"];

export const procedures: ReadModel<"procedures", ProceduresDoc> = {
  key: "procedures",
  kind: "stable",
  version: 3,
  handles,
  reads: [],
  initial: () => ({ procedures: [], results: [] }),
  evolve: (s, log) => (log.log_type === "procedure" ? applyProcedure(s, log) : applyResult(s, log)),
};
