import { describe, expect, it } from "vitest";
import { medicationChanges } from "../../../readmodels/changes/medications.js";
import { inWindow, type ChangeWindow } from "../../../readmodels/changes/types.js";
import type { LogRecord } from "../../../readmodels/log-record.js";
import { given, log } from "./given.js";

/**
 * The outside tester's patient (Europe/London, logs of 2026-11-20 to 26): Metformin 500 mg,
 * 750 mg on the 22nd, 1000 mg on the 24th; Lisinopril daily at 09:00, reported on the 20th
 * and 21st only, taken off the list on the 24th before its dose.
 */
const TZ = "Europe/London";
const t = (day: number, hh: number, mm = 0) => new Date(Date.UTC(2026, 10, day, hh, mm)).toISOString();
const list = (ts: string, medications: Record<string, unknown>[]) => log("medication_list_update", ts, { medications });
const dose = (rxnorm_cui: string, day: number, hh: number) =>
  log("medication_adherence", t(day, hh, 5), { medication_adherence: [{ status: "taken", rxnorm_cui, scheduled_time: t(day, hh) }] });

const listed = list(t(20, 7), [
  { action: "add", medication_name: "Metformin", rxnorm_cui: "860975", dose: "500 mg", schedule_times: ["08:00"] },
  { action: "add", medication_name: "Lisinopril", rxnorm_cui: "29046", dose: "10 mg", frequency: "QD", schedule_times: ["09:00"] },
]);
const to750 = list(t(22, 10), [{ action: "update", rxnorm_cui: "860975", dose: "750 mg" }]);
const to1000 = list(t(24, 7), [{ action: "update", rxnorm_cui: "860975", dose: "1000 mg" }]);
const removed = list(t(24, 8, 30), [{ action: "delete", rxnorm_cui: "29046" }]);
const metformin = [20, 21, 22, 23, 24, 25, 26].map((d) => dose("860975", d, 8));
const lisinopril = [20, 21].map((d) => dose("29046", d, 9));
export const tester: readonly LogRecord[] = [listed, to750, to1000, removed, ...metformin, ...lisinopril];

/** /changes over a window, as the route folds it: the state at each end and the window's logs. */
export function changesIn(w: ChangeWindow, logs: readonly LogRecord[] = tester) {
  const upTo = (at: string) => given(logs.filter((l) => Date.parse(l.timestamp) <= Date.parse(at)), TZ);
  return medicationChanges(upTo(w.since), upTo(w.until), w, logs.filter((l) => inWindow(l.timestamp, w)));
}

describe("medication changes", () => {
  it("cite the log that set the new value, then the one that set the value it is compared with", () => {
    const changed = changesIn({ since: t(21, 12), until: t(25, 12) }).find((c) => c.kind === "changed");
    expect(changed).toMatchObject({ what: "Metformin: dose 500 mg → 1000 mg", before: { dose: "500 mg" }, after: { dose: "1000 mg" } });
    // Not the 750 mg update in between: it is in neither side of the sentence.
    expect(changed!.log_ids).toEqual([to1000.id, listed.id]);
  });

  it("a window with one update cites that update, then the listing it is compared with", () => {
    const mid = changesIn({ since: t(21, 0), until: t(23, 0) }).find((c) => c.kind === "changed");
    expect(mid).toMatchObject({ what: "Metformin: dose 500 mg → 750 mg", log_ids: [to750.id, listed.id] });
  });
});
