/**
 * Helpers shared by the view templates. Everything is a function of its arguments: the
 * time a view is read at comes in as an argument (else the state's as-of time stands in),
 * days from Intl with the patient's zone, never from the machine's clock or zone.
 */
import { scalarText } from "../../catalog/json-shape.js";
import type { SourceRef } from "../lib/lists.js";
import { round } from "../lib/payload.js";
import { addDays, cmpTime, localDate, maxTime, timeMs } from "../lib/time.js";
import type { ModuleKey } from "../module.js";
import { moduleEntry, type PatientState } from "../patient-state.js";
import type { ModulePayloads } from "../payloads.js";
import type { RecentEntry, Segment, ViewBlock, Window } from "./types.js";

/** Length of the `week` segment. @default 7 (days) */
export const WEEK_DAYS = 7;
const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

/** A module's payload, or undefined when no log has changed it yet. */
export function doc<K extends ModuleKey>(state: PatientState, key: K): ModulePayloads[K] | undefined {
  return moduleEntry(state, key)?.payload;
}

/** The latest updated_at among the given modules: the as-of time of a view reading them. */
export function asOfOf(state: PatientState, keys: readonly ModuleKey[]): string | null {
  let out: string | null = null;
  for (const k of keys) {
    const e = moduleEntry(state, k);
    if (e) out = out === null ? e.updated_at : maxTime(out, e.updated_at);
  }
  return out;
}

/**
 * The week segment: the 7 calendar days, in the patient's zone, ending on the day of
 * `end` (the time of the read, or the data's as-of time when rendered without one).
 * Calendar days, not the 168 hours before a moment, so that a view rendered once holds
 * for every read on the same day.
 */
export function windowOf(end: string | null, tz: string): Window {
  const ms = end === null ? NaN : timeMs(end);
  if (Number.isNaN(ms)) return { tz, asOf: end, firstDay: "", lastDay: "" };
  const lastDay = localDate(end as string, tz);
  // Days counted on the calendar, not in hours: a change of clocks in the week moves no day.
  const firstDay = addDays(lastDay, -(WEEK_DAYS - 1));
  return { tz, asOf: end, firstDay, lastDay };
}

/** An instant in the week segment: on one of its 7 days in the patient's zone (later instants count too). */
export function inWeek(w: Window, iso: string | null | undefined): boolean {
  if (iso === null || iso === undefined || w.firstDay === "") return false;
  return !Number.isNaN(timeMs(iso)) && day(iso, w.tz) >= w.firstDay;
}

/** A calendar day (YYYY-MM-DD) in the week segment: one of the 7 days ending on the window's last day (later days count too). */
export function dayInWeek(w: Window, date: string): boolean {
  return w.firstDay !== "" && date >= w.firstDay;
}

/** YYYY-MM-DD of an instant in the patient's zone; a bare date is kept as is (it has no zone). */
export function day(iso: string | null | undefined, tz: string): string {
  if (iso === null || iso === undefined) return "?";
  return DATE_RE.test(iso) ? iso : localDate(iso, tz);
}

const MIDNIGHT_UTC_RE = /^(\d{4}-\d{2}-\d{2})[T ]00:00(?::00(?:\.0+)?)?(?:Z|\+00:00)$/;

/**
 * YYYY-MM-DD of a field that is a calendar date in meaning (birth, diagnosis, onset, start).
 * Clients often send such a date as midnight UTC: in a zone west of UTC that instant falls on
 * the day before, so it is read as the date written. Any other time is an instant like others.
 */
export function calendarDate(iso: string | null | undefined, tz: string): string {
  const m = iso === null || iso === undefined ? null : MIDNIGHT_UTC_RE.exec(iso);
  return m ? m[1]! : day(iso, tz);
}

const clocks = new Map<string, Intl.DateTimeFormat>();

/** HH:MM of an instant in the patient's zone (24 h); "?" when unparsable. */
export function hhmm(iso: string | null | undefined, tz: string): string {
  const ms = iso === null || iso === undefined ? NaN : timeMs(iso);
  if (Number.isNaN(ms)) return "?";
  let f = clocks.get(tz);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat("en-GB", { timeZone: tz, hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
    } catch {
      f = new Intl.DateTimeFormat("en-GB", { timeZone: "UTC", hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
    }
    clocks.set(tz, f);
  }
  return f.format(new Date(ms));
}

/** A number for display: at most `digits` decimals, no trailing zeros. */
export function fmt(n: number | null | undefined, digits = 2): string {
  return n === null || n === undefined ? "?" : String(round(n, digits));
}

/** Significant digits a measured value below 1 keeps. @default 3 */
const SMALL_SIGNIFICANT = 3;

/**
 * A measured value for display: like fmt, but a value below 1 keeps 3 significant digits:
 * fixed decimals showed a small result, even a flagged one, as 0 (0.0004 ng/mL [H] as "0").
 */
export function measured(n: number | null | undefined, digits = 2): string {
  if (n === null || n === undefined) return "?";
  const a = Math.abs(n);
  if (a === 0 || a >= 1 || !Number.isFinite(a)) return fmt(n, digits);
  const decimals = Math.min(100, Math.max(digits, SMALL_SIGNIFICANT - 1 - Math.floor(Math.log10(a))));
  // toFixed, as String() writes 1e-7 in exponent form.
  return n.toFixed(decimals).replace(/\.?0+$/, "");
}

/** A signed difference, small ones kept like measured values: "+1.5", "-2", "+0.0001", "0". */
export function signed(n: number, digits = 2): string {
  const s = measured(n, digits);
  return n > 0 && s !== "0" ? `+${s}` : s;
}

/** A score on its scale: "6/10", or "6" when the scale is unknown. */
export function scored(score: number | null | undefined, max: number | null | undefined): string {
  return max === null || max === undefined ? fmt(score) : `${fmt(score)}/${fmt(max)}`;
}

/**
 * Client text made safe for one bullet: whitespace collapsed, cut at `max` characters.
 * Null and undefined read as nothing, any other value as String() writes it (an array: its items).
 */
export function clean(s: unknown, max = 200): string {
  const t = (scalarText(s ?? "") ?? String(s)).replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** A count and its noun, plural unless 1: "1 use", "2 uses". */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** snake_case to words: "active_treatment" → "active treatment". */
export function words(s: string | null | undefined): string {
  return s === null || s === undefined ? "?" : clean(s.replace(/_/g, " "));
}

/** min, mean and max of some numbers, or null when there are none. */
export function spread(values: readonly number[]): { count: number; min: number; mean: number; max: number } | null {
  if (values.length === 0) return null;
  return { count: values.length, min: Math.min(...values), mean: values.reduce((a, b) => a + b, 0) / values.length, max: Math.max(...values) };
}

/** The non-empty strings among xs (false, null and undefined dropped): the optional parts of a line. */
export function parts(...xs: unknown[]): string[] {
  return xs.filter((x): x is string => typeof x === "string" && x !== "");
}

/** A recent entry from a stamped item of a module. */
export function entry(module_type: RecentEntry["module_type"], kind: string, x: { timestamp: string; log_id: string }, summary: string): RecentEntry {
  return { timestamp: x.timestamp, module_type, kind, summary, log_id: x.log_id };
}

type Ref = string | null | undefined | readonly (string | null | undefined)[];

/** Log ids, unique and sorted (ULIDs sort by acceptance), empty and missing ones dropped. */
export function refs(...xs: Ref[]): string[] {
  const out = new Set<string>();
  for (const x of xs) for (const id of Array.isArray(x) ? x : [x]) if (typeof id === "string" && id !== "") out.add(id);
  return [...out].sort();
}

export function sourceIds(e: { sources?: readonly SourceRef[] } | null | undefined): string[] {
  return (e?.sources ?? []).map((s) => s.log_id);
}

/** A block of bullets, or nothing when there is no line: callers spread the result. */
export function block(id: string, name: string, segment: Segment, lines: readonly string[], ids: Ref, data: unknown): ViewBlock[] {
  if (lines.length === 0) return [];
  return [{ id, name, text: lines.map((l) => `- ${l}`).join("\n"), segment, refs: refs(ids), data }];
}

/** Newest first; ties by log id (descending), then kind and summary, so the order is total. */
export function newestFirst(a: RecentEntry, b: RecentEntry): number {
  return -cmpTime(a.timestamp, b.timestamp) || cmp(b.log_id, a.log_id) || cmp(a.module_type, b.module_type) || cmp(a.kind, b.kind) || cmp(a.summary, b.summary);
}

export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * 64 bits of FNV-1a as two 32-bit lanes (standard offset basis, and a second basis),
 * 16 hex characters. An id for equal content, not a security property.
 */
export function shortHash(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (a >>> 15);
  }
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0");
}
