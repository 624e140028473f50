/** The last encounter's note and plan, for the profile view (and so the visit preparation). */
import type { Note, OpenItem } from "../modules/clinical_context/types.js";
import { cmpTime } from "../lib/time.js";
import type { PatientState } from "../patient-state.js";
import { block, calendarDate, clean, doc, parts, words } from "./lib.js";
import type { ViewBlock, Window } from "./types.js";

const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : null);
const obj = (v: unknown) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>) : {});
/** Statuses of an encounter that did not take place (or not yet). */
const NOT_HELD = new Set(["planned", "cancelled", "entered_in_error"]);
const CLOSED_PLAN = new Set(["completed", "cancelled", "stopped", "entered_in_error"]);
const OPEN_GOAL = new Set(["proposed", "planned", "accepted", "active", "on_hold"]);
const MOST_PLAN_ITEMS = 8;
const MOST_GOALS = 5;
const MOST_SECTIONS = 4;

/** When an encounter took place: its period's start, else the log's event time. */
const heldAt = (e: OpenItem) => str(obj(e.period).start) ?? e.timestamp;

function lastEncounter(encounters: readonly OpenItem[]): OpenItem | undefined {
  const held = encounters.filter((e) => !NOT_HELD.has(String(e.status)));
  return [...held].sort((a, b) => cmpTime(heldAt(a), heldAt(b))).at(-1);
}

/** The note written for the encounter, else the latest note when no encounter is on file. */
function noteOf(notes: readonly Note[], encounter: OpenItem | undefined): Note | undefined {
  if (encounter) return [...notes].reverse().find((n) => n.encounter_id !== null && n.encounter_id === encounter.key);
  return notes.at(-1);
}

export function lastEncounterBlock(state: PatientState, w: Window): ViewBlock[] {
  const cc = doc(state, "clinical_context");
  if (!cc) return [];
  const encounter = lastEncounter(cc.encounters);
  const note = noteOf(cc.notes, encounter);
  const plan = cc.plan_items
    .filter((p) => !CLOSED_PLAN.has(String(p.status)) || (encounter && p.encounter_id === encounter.key))
    .slice(-MOST_PLAN_ITEMS);
  const goals = cc.goals.filter((g) => OPEN_GOAL.has(String(g.lifecycle_status))).slice(-MOST_GOALS);
  const lines: string[] = [];
  const ids: string[] = [];
  if (encounter) {
    const who = str(obj(encounter.practitioner).name);
    const kind = parts(str(encounter.encounter_class), str(encounter.encounter_type) && words(str(encounter.encounter_type))).join(", ");
    lines.push(`**Encounter** ${calendarDate(heldAt(encounter), w.tz)}${kind ? ` (${kind})` : ""}${who ? ` with ${clean(who, 80)}` : ""}: ${words(String(encounter.status))}${str(encounter.reason) ? `, reason: ${clean(encounter.reason, 160)}` : ""}`);
    ids.push(encounter.log_id);
  }
  if (note) {
    const head = parts(note.note_type && words(note.note_type), note.authored_date && calendarDate(note.authored_date, w.tz)).join(", ");
    lines.push(`**Note**${head ? ` (${head})` : ""}`);
    for (const s of note.sections.slice(0, MOST_SECTIONS)) lines.push(`**${clean(s.section_label, 60)}**: ${clean(s.content, 400)}`);
    ids.push(note.log_id);
  }
  for (const p of plan) {
    const when = str(p.scheduled_date) ? `, scheduled ${calendarDate(str(p.scheduled_date), w.tz)}` : "";
    lines.push(`**Plan**: ${clean(p.description, 160)} (${words(String(p.item_type))}, ${words(String(p.status))}${when})`);
    ids.push(p.log_id);
  }
  for (const g of goals) {
    lines.push(`**Goal**: ${clean(g.description, 160)} (${parts(words(String(g.lifecycle_status)), str(g.achievement_status) && words(str(g.achievement_status))).join(", ")})`);
    ids.push(g.log_id);
  }
  return block("last_encounter", "Last encounter, note and plan", "long_term", lines, ids, { encounter: encounter ?? null, note: note ?? null, plan_items: plan, goals });
}
