/**
 * Views: generated snapshots of one patient's compiled state, one per view_type (template),
 * made of blocks in segments week, long_term and temp. Pure like the fold: the as-of time
 * is the latest updated_at of the view's input modules, never the clock, so the same
 * state renders the same view (and view_id) anywhere, any time.
 */
import type { ModuleKey } from "../module.js";
import type { PatientState } from "../patient-state.js";
import { deviceSnapshot } from "./device.js";
import { engagementSnapshot } from "./engagement.js";
import { labsSnapshot } from "./labs.js";
import { asOfOf, clean, day, hhmm, newestFirst, shortHash, WEEK_DAYS, windowOf } from "./lib.js";
import { medicationSnapshot } from "./medication.js";
import { profileSnapshot } from "./profile.js";
import { questionnaireSnapshot } from "./questionnaire.js";
import { symptomSnapshot } from "./symptom.js";
import { VIEW_TYPES, type RecentEntry, type View, type ViewDef, type ViewType, type ViewWindow } from "./types.js";
import { vitalsSnapshot } from "./vitals.js";

export { VIEW_TYPES } from "./types.js";
export type { RecentEntry, Segment, View, ViewBlock, ViewType, ViewWindow } from "./types.js";

/** Every template by view type; a view type without one does not compile. */
const DEFS: Readonly<Record<ViewType, ViewDef>> = {
  symptom_snapshot: symptomSnapshot, medication_snapshot: medicationSnapshot, labs_snapshot: labsSnapshot,
  vitals_snapshot: vitalsSnapshot, profile_snapshot: profileSnapshot, engagement_snapshot: engagementSnapshot,
  questionnaire_snapshot: questionnaireSnapshot, device_snapshot: deviceSnapshot,
};

/**
 * Version of what the renderers make of a state. Bump it with any change to a view's text,
 * blocks or data that comes with no module version change: a render cached in Redis under
 * another version is rendered again, rather than shown until its inputs next change.
 */
export const VIEWS_VERSION = 2;

/** The modules each view reads: a change to one of them is all that can change the view. */
export const VIEW_INPUTS: Record<ViewType, readonly ModuleKey[]> = Object.fromEntries(
  VIEW_TYPES.map((t) => [t, DEFS[t].inputs]),
) as Record<ViewType, readonly ModuleKey[]>;

/** The views to re-render after these modules changed, in VIEW_TYPES order. */
export function viewsAffectedBy(changed: readonly ModuleKey[]): ViewType[] {
  return VIEW_TYPES.filter((t) => VIEW_INPUTS[t].some((k) => changed.includes(k)));
}

export function isViewType(s: string): s is ViewType {
  return (VIEW_TYPES as readonly string[]).includes(s);
}

/** Human title of a view type ("Symptom snapshot"). */
export function viewTitle(type: ViewType): string {
  return DEFS[type].title;
}

/**
 * Renders one view from the state, its week segment ending on the day of `readAt` (the
 * time of the read; the view's as-of time when left out). The as-of time (valid_from) is
 * the latest updated_at of the view's input modules, so a log that touches no input
 * leaves the view unchanged on the same day.
 * view_id hashes the blocks (text, refs and data), not valid_from: same content, same id.
 * Hashed as plain JSON, not key-sorted: the fold gives a patient's logs byte-identical
 * state whatever their arrival order (test/unit/readmodels/order.property.test.ts), so the
 * blocks rendered from it serialize alike too; sorting keys cost half of every render.
 */
export function renderView(type: ViewType, state: PatientState, readAt?: string): View {
  const def = DEFS[type];
  const asOf = asOfOf(state, def.inputs);
  const w = windowOf(readAt ?? asOf, state.timezone);
  const all = def.blocks(state, w);
  const blocks = all.filter((b) => b.segment !== "temp");
  const temp = all.filter((b) => b.segment === "temp");
  const window = { days: WEEK_DAYS, first_day: w.firstDay || null, last_day: w.lastDay || null, time_zone: state.timezone };
  const expires = readAt === undefined ? null : (def.expiresAt?.(state, w) ?? null);
  return {
    view_type: type, view_id: `${type}:${shortHash(JSON.stringify({ blocks, temp }))}`, valid_from: asOf, valid_to: null, window, blocks, temp,
    ...(expires !== null ? { expires_at: expires } : {}),
  };
}

/** "last 7 days, 2026-11-20 to 2026-11-26 (Europe/Paris)": the window as a reader sees it. */
export function windowText(w: ViewWindow): string {
  return w.first_day === null ? "no week to show yet" : `last ${w.days} days, ${w.first_day} to ${w.last_day} (${w.time_zone})`;
}

/** A markdown document: title, one `##` section per block, then the temp blocks under "## To follow up". */
export function renderMarkdown(view: View, patientLabel?: string): string {
  const label = patientLabel !== undefined && clean(patientLabel, 120) !== "" ? `: ${clean(patientLabel, 120)}` : "";
  const out = [`# ${DEFS[view.view_type].title}${label}`, "", `_As of ${view.valid_from ?? "no data yet"} · week: ${windowText(view.window)} · ${view.view_id}_`];
  for (const b of view.blocks) out.push("", `## ${b.name}`, "", b.text);
  if (view.temp.length > 0) {
    out.push("", "## To follow up");
    for (const b of view.temp) out.push("", `### ${b.name}`, "", b.text);
  }
  if (view.blocks.length === 0 && view.temp.length === 0) out.push("", "_Nothing recorded yet._");
  return `${out.join("\n")}\n`;
}

/**
 * The dated entries behind a view, newest first (by event time, then log id), at most
 * `limit` of them; total_count counts them all. Bounded by what the modules keep
 * (their recent windows and histories).
 */
export function recentEntries(type: ViewType, state: PatientState, limit: number, readAt?: string): { entries: RecentEntry[]; total_count: number } {
  const all = allRecentEntries(type, state, readAt);
  const n = Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : 0;
  return { entries: all.slice(0, n), total_count: all.length };
}

/** Every dated entry behind a view, newest first as recentEntries orders them (for paging past the newest). */
export function allRecentEntries(type: ViewType, state: PatientState, readAt?: string): RecentEntry[] {
  const def = DEFS[type];
  return def.entries(state, windowOf(readAt ?? asOfOf(state, def.inputs), state.timezone)).sort(newestFirst);
}

/**
 * A recent entry as one line, its time in the patient's zone to the minute:
 * `2026-11-21 09:00 — symptom_report: pain 7/10 (esas_r)`. Client text in a summary
 * (a lab's name, a test's value) has its line breaks collapsed, so it stays one line.
 */
export function recentLine(e: RecentEntry, tz: string): string {
  return `${day(e.timestamp, tz)} ${hhmm(e.timestamp, tz)} — ${e.kind}: ${e.summary.replace(/\s+/g, " ").trim()}`;
}
