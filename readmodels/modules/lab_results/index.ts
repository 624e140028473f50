import { utcInstant } from "../../lib/time.js";
import type { LogType } from "../../../src/catalog/log-types.js";
import { findByIdentity, type Identity } from "../../lib/identity.js";
import { HISTORY, insertSorted, last, replaceAt } from "../../lib/lists.js";
import { num, objs, str, type Obj } from "../../lib/payload.js";
import { withDoc, type ReadModel } from "../../module.js";

export type AbnormalFlag = "H" | "L" | "N" | "HH" | "LL";

export interface LabValue {
  value_numeric: number | null;
  value_string: string | null;
  /** As reported; when absent, derived from value_numeric and the reference range (H, L or N). */
  abnormal_flag: AbnormalFlag | null;
  /** Collection time: the payload's collection_datetime, else the log's timestamp. */
  timestamp: string;
  log_id: string;
}

/** One test, identified by loinc_code, else normalized test_name. */
export interface LabResult {
  loinc_code: string | null;
  test_name: string | null;
  /** Unit of the latest value. */
  unit: string | null;
  test_category: string | null;
  specimen_type: string | null;
  reference_range_low: number | null;
  reference_range_high: number | null;
  /** final | preliminary | corrected, of the latest value. */
  result_status: string | null;
  latest: LabValue;
  /** The last 50 values by collection time; `latest` is the last of them. */
  history: LabValue[];
}

export interface AbnormalResult {
  loinc_code: string | null;
  test_name: string | null;
  abnormal_flag: AbnormalFlag;
  /** HH or LL. */
  critical: boolean;
  value_numeric: number | null;
  value_string: string | null;
  unit: string | null;
  timestamp: string;
  log_id: string;
}

export interface LabResultsDoc {
  results: LabResult[];
  /** The tests whose latest value is flagged other than N, in `results` order. */
  abnormal: AbnormalResult[];
}

const FLAGS: readonly string[] = ["H", "L", "N", "HH", "LL"];
const identityOf = (r: Pick<LabResult, "loinc_code" | "test_name">): Identity => ({ codes: [r.loinc_code], name: r.test_name });

function flagOf(r: Obj): AbnormalFlag | null {
  const f = str(r, "abnormal_flag");
  if (f !== undefined && FLAGS.includes(f)) return f as AbnormalFlag;
  const v = num(r, "value_numeric");
  const lo = num(r, "reference_range_low");
  const hi = num(r, "reference_range_high");
  if (v === undefined || (lo === undefined && hi === undefined)) return null;
  return lo !== undefined && v < lo ? "L" : hi !== undefined && v > hi ? "H" : "N";
}

function abnormalOf(results: readonly LabResult[]): AbnormalResult[] {
  return results.flatMap((r) => {
    const f = r.latest.abnormal_flag;
    if (f === null || f === "N") return [];
    const { value_numeric, value_string, timestamp, log_id } = r.latest;
    return [{ loinc_code: r.loinc_code, test_name: r.test_name, abnormal_flag: f, critical: f === "HH" || f === "LL", value_numeric, value_string, unit: r.unit, timestamp, log_id }];
  });
}

export const handles: readonly LogType[] = ["lab_results"];

export const labResults: ReadModel<"lab_results", LabResultsDoc> = {
  key: "lab_results",
  kind: "event",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ results: [], abnormal: [] }),
  evolve: (s, log) => {
    const collected = str(log.payload, "collection_datetime");
    const timestamp = collected === undefined ? log.timestamp : utcInstant(collected);
    let results = s.doc.results;
    for (const r of objs(log.payload, "results")) {
      const loinc_code = str(r, "loinc_code") ?? null;
      const test_name = str(r, "test_name") ?? null;
      if (!loinc_code && !test_name) continue;
      const value: LabValue = {
        value_numeric: num(r, "value_numeric") ?? null, value_string: str(r, "value_string") ?? null,
        abnormal_flag: flagOf(r), timestamp, log_id: log.id,
      };
      const at = findByIdentity(results, { codes: [loinc_code], name: test_name }, identityOf);
      const prev = at >= 0 ? results[at] : undefined;
      const history = insertSorted(prev?.history ?? [], value, HISTORY);
      const isLatest = last(history) === value;
      // Descriptive fields follow the latest value; a late-arriving older value only joins the history.
      const kept = (k: keyof LabResult) => (prev ? (prev[k] as string | number | null) : null);
      const described = <T extends string | number>(k: keyof LabResult, v: T | undefined) =>
        (isLatest ? (v ?? kept(k)) : kept(k)) as T | null;
      const next: LabResult = {
        loinc_code: prev?.loinc_code ?? loinc_code,
        test_name: described("test_name", test_name ?? undefined),
        unit: described("unit", str(r, "unit")),
        test_category: described("test_category", str(r, "test_category")),
        specimen_type: described("specimen_type", str(r, "specimen_type")),
        reference_range_low: described("reference_range_low", num(r, "reference_range_low")),
        reference_range_high: described("reference_range_high", num(r, "reference_range_high")),
        result_status: described("result_status", str(r, "result_status")),
        latest: last(history) as LabValue,
        history,
      };
      results = replaceAt(results, at, next);
    }
    if (results === s.doc.results) return s;
    return withDoc(s, { results, abnormal: abnormalOf(results) });
  },
};
