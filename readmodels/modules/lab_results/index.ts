import { moveClocks } from "../../lib/clocks.js";
import { cmpTime, utcInstant } from "../../lib/time.js";
import type { LogPayloads } from "../../../catalog/payloads.js";
import { findByIdentity, identityKey, type Identity } from "../../lib/identity.js";
import { addSource, HISTORY, insertSorted, last, replaceAt, type SourceRef } from "../../lib/lists.js";
import { extra, finite, items, num, oneOf, str, text, type Obj } from "../../lib/payload.js";
import { withDoc, type ReadModel } from "../../module.js";
import { itemExtensions, mergeExtensions } from "../../lib/extensions.js";

export type AbnormalFlag = "H" | "L" | "N" | "HH" | "LL";

type Result = LogPayloads["lab_results"]["results"][number];

/**
 * A result's value. Clients of the hosted product send one `value` (its SDK's own example
 * does), a field the catalog does not name: a number reads as value_numeric, a string as
 * value_string, when neither is sent.
 */
function valuesOf(r: Result): { value_numeric: number | null; value_string: string | null } {
  const value_numeric = finite(r.value_numeric) ?? null;
  const value_string = text(r.value_string) ?? null;
  if (value_numeric !== null || value_string !== null) return { value_numeric, value_string };
  return { value_numeric: num(r, "value") ?? null, value_string: str(r, "value") ?? null };
}

/** "12.0-16.0" (hyphen or dash): the text form of a range some clients send as `reference_range`. */
const RANGE_TEXT = /^\s*(-?\d+(?:\.\d+)?)\s*[-\u2013\u2014]\s*(-?\d+(?:\.\d+)?)\s*$/;

/** The range's bounds: reference_range_low/high, else a `reference_range` text "low-high" (not a catalog field). */
function rangeOf(r: Result): [number | undefined, number | undefined] {
  const low = finite(r.reference_range_low);
  const high = finite(r.reference_range_high);
  if (low !== undefined || high !== undefined) return [low, high];
  const m = RANGE_TEXT.exec(str(r, "reference_range") ?? "");
  if (!m || Number(m[1]) > Number(m[2])) return [undefined, undefined];
  return [Number(m[1]), Number(m[2])];
}

export interface LabValue {
  value_numeric: number | null;
  value_string: string | null;
  /** The unit this result was reported in (null when it gave none): a test's results may come in different units. */
  unit: string | null;
  /** As reported; when absent, derived from value_numeric and a reference range (H, L or N; null without one): see flag_source. */
  abnormal_flag: AbnormalFlag | null;
  /**
   * reported: sent by the lab. own_range: derived from the range sent with this result.
   * test_range: the result came with neither, so it is judged against the test's latest
   * range in the result's own unit (no flag without one), and follows it when a later
   * result changes it.
   */
  flag_source: "reported" | "own_range" | "test_range";
  /** final | preliminary | corrected, as sent with this value (null when it gave none). */
  result_status: string | null;
  /** Collection time: the payload's collection_datetime, else the log's timestamp. */
  timestamp: string;
  /** Event time of the log that reported it: a result (or its correction) can come days after the draw. */
  reported_at: string;
  log_id: string;
}

/** A reference range, in the unit of the result that gave it. */
export interface LabRange {
  unit: string | null;
  low: number | null;
  high: number | null;
}

/**
 * One test, identified by loinc_code, else normalized test_name. Each descriptive field
 * (test_name, unit, test_category, specimen_type, result_status, and each unit's
 * reference range as one pair) is the one of the latest result by collection time that gave it.
 */
export interface LabResult {
  loinc_code: string | null;
  test_name: string | null;
  /** Unit of the latest value (that gave one). */
  unit: string | null;
  test_category: string | null;
  specimen_type: string | null;
  /** The range in the test's `unit` (null when none was given in it): a range only applies to values in its unit. */
  reference_range_low: number | null;
  reference_range_high: number | null;
  /** The latest range given in each other unit (units compared trimmed, case-insensitively): see rangesOf. */
  other_unit_ranges: LabRange[];
  /** final | preliminary | corrected, of the latest value (that gave one). */
  result_status: string | null;
  latest: LabValue;
  /**
   * The last 50 values by collection time; `latest` is the last of them. A value collected
   * at the same time as the one before it replaces that one (the same draw reported again:
   * corrected, or final after preliminary), as `latest` is chosen: see currentValues.
   */
  history: LabValue[];
  /** The payload's extensions, then the result's own, merged at leaf level (latest event time wins per leaf). */
  extensions: Obj;
  /** The last 10 logs that reported this test (source: the result's, else the payload's). */
  sources: SourceRef[];
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

/** A unit as compared: trimmed, case-insensitive; an absent unit is "". */
export const unitKey = (u: string | null): string => (u === null ? "" : u.trim().toLowerCase());

type RangeHolder = Pick<LabResult, "unit" | "reference_range_low" | "reference_range_high" | "other_unit_ranges">;

/** Every range a test knows, one per unit: the one in its unit, then those in others. */
export function rangesOf(r: RangeHolder): LabRange[] {
  if (r.reference_range_low === null && r.reference_range_high === null) return r.other_unit_ranges;
  return [{ unit: r.unit, low: r.reference_range_low, high: r.reference_range_high }, ...r.other_unit_ranges];
}

const findRange = (ranges: readonly LabRange[], unit: string | null): LabRange | undefined =>
  ranges.find((g) => unitKey(g.unit) === unitKey(unit));

/** The test's range in a unit, if it knows one: a range applies only to values in its unit. */
export const rangeIn = (r: RangeHolder, unit: string | null): LabRange | undefined => findRange(rangesOf(r), unit);

/** Whether history[i] replaces the value before it: both were collected at the same time. */
const replaces = (history: readonly LabValue[], i: number): boolean =>
  i > 0 && i < history.length && cmpTime(history[i - 1]!.timestamp, history[i]!.timestamp) === 0;

/** A value as it stands, with the one of the same draw it replaced (the latest such, if any). */
export interface CurrentValue {
  v: LabValue;
  replaced: LabValue | undefined;
}

/** A test's results as they stand, oldest first: a value replaced by a later one of the same collection time is left out. */
export function currentValues(history: readonly LabValue[]): CurrentValue[] {
  return history.flatMap((v, i) => (replaces(history, i + 1) ? [] : [{ v, replaced: replaces(history, i) ? history[i - 1] : undefined }]));
}

/** Whether a value replacing another changes what it says (value, unit or flag), or calls itself a correction. */
export const isCorrection = (v: LabValue, was: LabValue): boolean =>
  v.result_status === "corrected" || v.value_numeric !== was.value_numeric || v.value_string !== was.value_string ||
  unitKey(v.unit) !== unitKey(was.unit) || v.abnormal_flag !== was.abnormal_flag;

const NS = "results";
const FLAGS: readonly AbnormalFlag[] = ["H", "L", "N", "HH", "LL"];
const identityOf = (r: Pick<LabResult, "loinc_code" | "test_name">): Identity => ({ codes: [r.loinc_code], name: r.test_name });

function rangeFlag(v: number | null, lo: number | null, hi: number | null): AbnormalFlag | null {
  if (v === null || (lo === null && hi === null)) return null;
  return lo !== null && v < lo ? "L" : hi !== null && v > hi ? "H" : "N";
}

/** The ranges with `g` as its unit's range (its spelling of the unit kept). */
function withRange(ranges: readonly LabRange[], g: LabRange): LabRange[] {
  const i = ranges.findIndex((x) => unitKey(x.unit) === unitKey(g.unit));
  return replaceAt(ranges, i, g);
}

function abnormalOf(results: readonly LabResult[]): AbnormalResult[] {
  return results.flatMap((r) => {
    const f = r.latest.abnormal_flag;
    if (f === null || f === "N") return [];
    const { value_numeric, value_string, timestamp, log_id } = r.latest;
    return [{ loinc_code: r.loinc_code, test_name: r.test_name, abnormal_flag: f, critical: f === "HH" || f === "LL", value_numeric, value_string, unit: r.latest.unit ?? r.unit, timestamp, log_id }];
  });
}

export const handles = ["lab_results"] as const;

export const labResults: ReadModel<"lab_results", LabResultsDoc, "lab_results"> = {
  key: "lab_results",
  kind: "event",
  version: 8,
  handles,
  reads: [],
  initial: () => ({ results: [], abnormal: [] }),
  evolve: (s, log) => {
    const p = log.payload;
    const collected = text(p.collection_datetime);
    const timestamp = collected === undefined ? log.timestamp : utcInstant(collected);
    let results = s.doc.results;
    let clocks = s.clocks;
    for (const r of items(p.results)) {
      const loinc_code = text(r.loinc_code) ?? null;
      const test_name = text(r.test_name) ?? null;
      if (!loinc_code && !test_name) continue;
      const at = findByIdentity(results, { codes: [loinc_code], name: test_name }, identityOf);
      const prev = at >= 0 ? results[at] : undefined;
      const key = identityKey({ codes: [prev?.loinc_code ?? loinc_code], name: prev?.test_name ?? test_name });
      if (prev) clocks = moveClocks(clocks, [NS, identityKey(identityOf(prev))], [NS, key]);
      // A field this result leaves out keeps the value of the latest result that gave it,
      // so neither arrival order nor a sparse latest result loses it. Its clock holds the
      // collection time of that result (the order values follow), not an event time.
      const stamps: Record<string, string> = {};
      const wins = (field: string): boolean => {
        const k = JSON.stringify([NS, key, "collected", field]);
        const c = clocks[k];
        if (c !== undefined && cmpTime(c, timestamp) > 0) return false;
        stamps[k] = timestamp;
        return true;
      };
      const described = <T>(field: keyof LabResult, v: T | undefined): T | null =>
        v !== undefined && wins(field) ? v : ((prev?.[field] ?? null) as T | null);
      const [low, high] = rangeOf(r);
      const ownRange = low !== undefined || high !== undefined;
      const valueUnit = text(r.unit) ?? null;
      // A range is one fact in one unit: the bounds of two reports are never mixed, nor a range of one unit applied to another.
      const known = prev ? rangesOf(prev) : [];
      const was = findRange(known, valueUnit);
      const newRange = ownRange && wins(`reference_range:${unitKey(valueUnit)}`) && (was?.low !== (low ?? null) || was?.high !== (high ?? null));
      const ranges = newRange ? withRange(known, { unit: valueUnit, low: low ?? null, high: high ?? null }) : known;
      const flagged = (v: LabValue): LabValue => {
        if (v.flag_source !== "test_range") return v;
        const g = findRange(ranges, v.unit);
        const f = g ? rangeFlag(v.value_numeric, g.low, g.high) : null;
        return f === v.abnormal_flag ? v : { ...v, abnormal_flag: f };
      };
      const flag = oneOf(r.abnormal_flag, FLAGS) ?? null;
      const { value_numeric, value_string } = valuesOf(r);
      const value: LabValue = {
        value_numeric, value_string, unit: valueUnit,
        abnormal_flag: flag ?? (ownRange ? rangeFlag(value_numeric, low ?? null, high ?? null) : null),
        flag_source: flag !== null ? "reported" : ownRange ? "own_range" : "test_range",
        result_status: text(r.result_status) ?? null, timestamp, reported_at: log.timestamp, log_id: log.id,
      };
      let history = insertSorted(prev?.history ?? [], flagged(value), HISTORY);
      // Results without a flag or range of their own follow their unit's range: a new one re-judges them.
      if (prev && newRange) history = history.map(flagged);
      const name = described("test_name", test_name ?? undefined);
      const unit = described("unit", text(r.unit));
      const shown = findRange(ranges, unit);
      const test_category = described("test_category", text(r.test_category));
      const specimen_type = described("specimen_type", text(r.specimen_type));
      const result_status = described("result_status", text(r.result_status));
      const ext = mergeExtensions(prev?.extensions ?? {}, clocks, [NS, key], itemExtensions(p, r), log.timestamp);
      clocks = Object.keys(stamps).length > 0 ? { ...ext.clocks, ...stamps } : ext.clocks;
      // A result's own `source` is not a catalog field, but kept when sent, and preferred.
      const next: LabResult = {
        loinc_code: prev?.loinc_code ?? loinc_code, test_name: name, unit, test_category, specimen_type,
        reference_range_low: shown?.low ?? null, reference_range_high: shown?.high ?? null,
        other_unit_ranges: ranges.filter((g) => g !== shown), result_status,
        latest: last(history) as LabValue, history, extensions: ext.extensions, sources: addSource(prev?.sources, log, extra(r, "source")),
      };
      results = replaceAt(results, at, next);
    }
    if (results === s.doc.results) return s;
    return withDoc(s, { results, abnormal: abnormalOf(results) }, clocks);
  },
};
