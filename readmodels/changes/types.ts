/** What changed for a patient between two times, by clinical domain (get_changes). */

/** One change: what kind, one line to read, when, and the logs it comes from. */
export interface ChangeItem {
  /** new, worsened, improved, resolved, returned, new_test, corrected, updated, abnormal, critical, added, removed, changed, skipped_dose, … */
  kind: string;
  /** The change in one line ("pain: worsened, 4/10 → 8/10 (esas_r)"). */
  what: string;
  /** Event time of the change (the latest log behind it). */
  at: string;
  /** Ids of the logs it comes from: cite them. */
  log_ids: string[];
  /** The value at the start of the window, where there is one to compare. */
  before?: unknown;
  /** The value at its end. */
  after?: unknown;
}

export interface ClinicalChanges {
  symptoms: ChangeItem[];
  labs: ChangeItem[];
  medications: ChangeItem[];
  vitals: ChangeItem[];
  devices: ChangeItem[];
  questionnaires: ChangeItem[];
  encounters: ChangeItem[];
}

/** The window: changes after `since`, up to and including `until`. */
export interface ChangeWindow {
  since: string;
  until: string;
}

/** After `since`, at or before `until`, as instants. */
export function inWindow(ts: string | null | undefined, w: ChangeWindow): boolean {
  if (ts === null || ts === undefined) return false;
  const t = Date.parse(ts);
  return t > Date.parse(w.since) && t <= Date.parse(w.until);
}

/** Newest first, by event time. */
export const newestFirst = (a: ChangeItem, b: ChangeItem): number => Date.parse(b.at) - Date.parse(a.at);
