/** Symptoms that are new, worsened, improved, resolved or returned between two states. */
import type { Symptom, SymptomReport } from "../modules/symptoms/index.js";
import type { PatientState } from "../patient-state.js";
import { doc, fmt } from "../views/lib.js";
import { isSevere } from "../views/symptom.js";
import { inWindow, type ChangeItem, type ChangeWindow } from "./types.js";
import type { LoneLog } from "./window-logs.js";

const keyOf = (s: Symptom) => s.name.toLowerCase();
const said = (r: SymptomReport) => `${fmt(r.score)} (${r.instrument})`;
const point = (r: SymptomReport) => ({ score: r.score, instrument: r.instrument, at: r.timestamp, log_id: r.log_id });

/** The kind of change from the last report before the window to the last one in it; null when nothing changed. */
function kindOf(before: SymptomReport | undefined, latest: SymptomReport): string | null {
  if (!before) return latest.score > 0 ? "new" : null;
  if (before.score > 0 && latest.score === 0) return "resolved";
  if (before.score === 0 && latest.score > 0) return "returned";
  if (before.instrument !== latest.instrument) return "changed_instrument";
  return latest.score > before.score ? "worsened" : latest.score < before.score ? "improved" : null;
}

/**
 * Each symptom reported in the window, compared with where it stood at the window's start
 * (the state folded to then, so a history cut short later does not matter), with how many
 * reports the window's logs hold. Unchanged symptoms are left out; a severe one says so.
 */
export function symptomChanges(before: PatientState, after: PatientState, w: ChangeWindow, alone: readonly LoneLog[]): ChangeItem[] {
  const start = new Map((doc(before, "symptoms")?.symptoms ?? []).map((s) => [keyOf(s), s]));
  // Reports per symptom from the window's logs: the kept history holds the newest 50.
  const counted = new Map<string, number>();
  for (const a of alone) for (const s of doc(a.state, "symptoms")?.symptoms ?? []) counted.set(keyOf(s), (counted.get(keyOf(s)) ?? 0) + 1);
  const out: ChangeItem[] = [];
  for (const s of doc(after, "symptoms")?.symptoms ?? []) {
    const reports = s.history.filter((h) => inWindow(h.timestamp, w));
    const latest = reports.at(-1);
    if (!latest) continue;
    const was = start.get(keyOf(s))?.history.at(-1);
    const kind = kindOf(was, latest);
    if (kind === null) continue;
    const severe = isSevere(s) ? ", severe" : "";
    const count = Math.max(counted.get(keyOf(s)) ?? 0, reports.length);
    const n = count === 1 ? "1 report" : `${count} reports`;
    out.push({
      kind,
      what: `${s.name}: ${kind.replace("_", " ")}, ${was ? `${said(was)} → ` : ""}${said(latest)}${severe} (${n} in the window)`,
      at: latest.timestamp,
      log_ids: [latest.log_id, ...(was ? [was.log_id] : [])],
      ...(was ? { before: point(was) } : {}),
      after: point(latest),
    });
  }
  return out;
}
