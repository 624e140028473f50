/** The medication list's changes, and the doses missed, between two states. */
import type { LogRecord } from "../log-record.js";
import { setBy, type Medication } from "../modules/medications/index.js";
import { moduleEntry, type PatientState } from "../patient-state.js";
import { findMissedDoses, localClock } from "../findings.js";
import { doc, sourceIds } from "../views/lib.js";
import { keyOf } from "../views/medication.js";
import { inWindow, type ChangeItem, type ChangeWindow } from "./types.js";
import { foldedAlone, skippedDoses, type LoneLog } from "./window-logs.js";

const nameOf = (m: { rxnorm_cui: string | null; medication_name: string | null }) => m.medication_name ?? m.rxnorm_cui ?? "medication";

/** The fields whose change a prescriber made. */
const FIELDS = ["dose", "dose_unit", "frequency", "route", "form", "schedule_times"] as const;

function shown(v: unknown): string {
  if (v === null || v === undefined) return "none";
  if (Array.isArray(v)) return v.join(", ") || "none";
  return typeof v === "string" || typeof v === "number" ? String(v) : JSON.stringify(v);
}

/** The window's sources of an entry (its logs in the window), else its latest. */
function windowSources(m: Medication, w: ChangeWindow): string[] {
  const ids = m.sources.filter((s) => inWindow(s.timestamp, w)).map((s) => s.log_id);
  return ids.length ? ids : sourceIds(m).slice(-1);
}

/** The list update in the window that took a medication off the list (for its log id). */
function removal(logs: readonly LogRecord[], m: Medication): LogRecord | undefined {
  return [...logs].reverse().find((l) => l.log_type === "medication_list_update" &&
    ((l.payload as { medications?: { action?: string; rxnorm_cui?: string; medication_name?: string }[] }).medications ?? [])
      .some((x) => (x.action === "remove" || x.action === "delete") && keyOf({ rxnorm_cui: x.rxnorm_cui ?? null, medication_name: x.medication_name ?? null }) === keyOf(m)));
}

function listChanges(before: PatientState, after: PatientState, w: ChangeWindow, logs: readonly LogRecord[]): ChangeItem[] {
  const was = new Map((doc(before, "medications")?.medications ?? []).map((m) => [keyOf(m), m]));
  const now = doc(after, "medications")?.medications ?? [];
  const beforeClocks = moduleEntry(before, "medications")?.clocks ?? {};
  const afterClocks = moduleEntry(after, "medications")?.clocks ?? {};
  const out: ChangeItem[] = [];
  for (const m of now) {
    const b = was.get(keyOf(m));
    if (!b) {
      out.push({ kind: "added", what: `${nameOf(m)}: added${m.dose ? `, ${m.dose}` : ""}${m.frequency ? ` ${m.frequency}` : ""}`, at: m.updated_at, log_ids: windowSources(m, w), after: m });
      continue;
    }
    const changed = FIELDS.filter((f) => JSON.stringify(b[f] ?? null) !== JSON.stringify(m[f] ?? null));
    if (changed.length === 0) continue;
    // Cite as symptoms and labs do: the log that set the values said after the arrow, then
    // the one that set those before it (an update in between, 500 → 750 → 1000 mg, is neither).
    const by = setBy(afterClocks, m, changed) ?? windowSources(m, w).at(-1);
    const from = setBy(beforeClocks, b, changed);
    out.push({
      kind: "changed",
      what: `${nameOf(m)}: ${changed.map((f) => `${f} ${shown(b[f])} → ${shown(m[f])}`).join("; ")}`,
      at: m.updated_at,
      log_ids: [...(by ? [by] : []), ...(from && from !== by ? [from] : [])],
      before: Object.fromEntries(changed.map((f) => [f, b[f] ?? null])),
      after: Object.fromEntries(changed.map((f) => [f, m[f] ?? null])),
    });
  }
  const kept = new Set(now.map(keyOf));
  for (const [k, m] of was) {
    if (kept.has(k)) continue;
    const by = removal(logs, m);
    out.push({ kind: "removed", what: `${nameOf(m)}: taken off the list`, at: by?.timestamp ?? w.until, log_ids: by ? [by.id] : sourceIds(m).slice(-1), before: m });
  }
  return out;
}

/**
 * Doses reported skipped in the window, and per medication the scheduled doses of the
 * window with no report by `until` (schedules are laid out over the 7 days before it),
 * citing the listing's latest log.
 */
function missedDoses(after: PatientState, w: ChangeWindow, alone: readonly LoneLog[]): ChangeItem[] {
  const tz = after.timezone;
  const { unreported } = findMissedDoses(after, w.until, (t) => inWindow(t, w));
  const out: ChangeItem[] = skippedDoses(alone).map((d) => ({
    kind: "skipped_dose",
    what: `${nameOf(d)}: dose skipped${d.scheduled_time ? `, scheduled ${localClock(d.scheduled_time, tz)}` : ""}`,
    at: d.timestamp,
    log_ids: [d.log_id],
  }));
  for (const { schedule: sch, doses, listing } of unreported) {
    const span = doses.length === 1 ? `scheduled ${localClock(doses[0]!.scheduled_time, tz)}` : `${localClock(doses[0]!.scheduled_time, tz)} to ${localClock(doses.at(-1)!.scheduled_time, tz)}`;
    out.push({
      kind: "doses_not_reported",
      what: `${nameOf(sch)}: ${doses.length} scheduled dose${doses.length === 1 ? "" : "s"} not reported (${span})`,
      at: doses.at(-1)!.scheduled_time,
      log_ids: sourceIds(listing).slice(-1),
      after: { scheduled_times: doses.map((d) => d.scheduled_time) },
    });
  }
  return out;
}

export function medicationChanges(before: PatientState, after: PatientState, w: ChangeWindow, logs: readonly LogRecord[], alone = foldedAlone(after, logs)): ChangeItem[] {
  return [...listChanges(before, after, w, logs), ...missedDoses(after, w, alone)];
}
