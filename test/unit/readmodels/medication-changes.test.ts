import { describe, expect, it } from "vitest";
import { missedDoses as alertMissed } from "../../../app/mcp/prompts/alert-findings.js";
import { medicationChanges } from "../../../readmodels/changes/medications.js";
import { inWindow, type ChangeWindow } from "../../../readmodels/changes/types.js";
import type { LogRecord } from "../../../readmodels/log-record.js";
import type { MedicationSchedule } from "../../../readmodels/modules/adherence/index.js";
import { renderView } from "../../../readmodels/views/index.js";
import { given, log, payload } from "./given.js";

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

describe("a medication taken off the list", () => {
  const lisinoprilOf = (s: readonly MedicationSchedule[]) => s.find((x) => x.rxnorm_cui === "29046");

  it("keeps, in the adherence schedule, the doses due while it was listed and none after", () => {
    const sch = lisinoprilOf(payload(given(tester, TZ), "adherence").schedule);
    expect(sch).toMatchObject({ removed_at: removed.timestamp, expected: 4, taken: 2, unreported: 2 });
    expect(sch!.doses.map((d) => [d.scheduled_time, d.status])).toEqual([
      [t(20, 9), "taken"], [t(21, 9), "taken"], [t(22, 9), "unreported"], [t(23, 9), "unreported"],
    ]);
  });

  it("still lists its missed doses in /changes over a window that reaches past the removal", () => {
    const missed = changesIn({ since: t(21, 12), until: t(25, 12) }).find((c) => c.kind === "doses_not_reported" && c.what.startsWith("Lisinopril"));
    expect(missed).toMatchObject({
      what: "Lisinopril: 2 scheduled doses not reported (2026-11-22 09:00 to 2026-11-23 09:00)",
      after: { scheduled_times: [t(22, 9), t(23, 9)] },
      log_ids: [listed.id],
    });
  });

  it("says them in the provider alert and the medication view, citing its listing", () => {
    const state = given(tester, TZ);
    expect(alertMissed(state, t(21, 12), t(26, 12)).find((f) => f.line.startsWith("Lisinopril"))).toEqual({
      timestamp: t(23, 9), line: "Lisinopril: not reported (2 scheduled doses, 2026-11-22 09:00 to 2026-11-23 09:00)", log_ids: [listed.id],
    });
    const view = renderView("medication_snapshot", state, t(26, 12));
    expect(view.temp.find((b) => b.id === "missed_doses")?.data).toContainEqual({ medication: "Lisinopril", status: "unreported", scheduled_times: [t(22, 9), t(23, 9)] });
  });

  it("is laid out as listed again once it is added back, the earlier listing keeping the doses it missed", () => {
    const back = list(t(26, 7), [{ action: "add", medication_name: "Lisinopril", rxnorm_cui: "29046", schedule_times: ["09:00"], start_date: "2026-11-01" }]);
    const s = payload(given([...tester, back, dose("29046", 27, 9)], TZ), "adherence");
    const [before, now] = [s.schedule.find((x) => x.rxnorm_cui === "29046" && x.removed_at !== null), s.schedule.find((x) => x.rxnorm_cui === "29046" && x.removed_at === null)];
    // The week up to the 27th 09:05: the 21st to the 23rd.
    expect(before).toMatchObject({ removed_at: removed.timestamp, expected: 3, taken: 1, unreported: 2 });
    // The new listing's start_date reaches back, but the times before its removal are the earlier listing's.
    expect(now?.doses.map((d) => [d.scheduled_time, d.status])).toEqual([[t(24, 9), "unreported"], [t(25, 9), "unreported"], [t(26, 9), "unreported"], [t(27, 9), "taken"]]);
  });

  it("keeps the doses missed under an earlier listing when listed again without a schedule (Asia/Kolkata)", () => {
    const kolkata = [
      list("2026-11-21T04:30:00Z", [{ action: "add", medication_name: "Atorvastatin", schedule_times: ["21:00"] }]),
      list("2026-11-23T04:30:00Z", [{ action: "delete", medication_name: "Atorvastatin" }]),
      list("2026-11-25T04:30:00Z", [{ action: "add", medication_name: "Atorvastatin", dose: "40 mg" }]),
    ];
    const upTo = (at: string) => given(kolkata.filter((l) => l.timestamp <= at), "Asia/Kolkata");
    const state = upTo("2026-11-28T12:00:00Z");
    expect(payload(state, "adherence").schedule).toEqual([expect.objectContaining({ medication_name: "Atorvastatin", removed_at: kolkata[1]!.timestamp, unreported: 2 })]);
    const view = renderView("medication_snapshot", state, "2026-11-28T12:00:00Z");
    expect(view.temp.find((b) => b.id === "missed_doses")).toMatchObject({ text: "- **Atorvastatin**: not reported, scheduled 2026-11-22 21:00", refs: [kolkata[0]!.id] });
    const w = { since: "2026-11-20T00:00:00Z", until: "2026-11-28T12:00:00Z" };
    expect(medicationChanges(upTo(w.since), state, w, kolkata).map((c) => [c.what, c.log_ids])).toEqual([
      ["Atorvastatin: added, 40 mg", [kolkata[2]!.id]],
      ["Atorvastatin: 2 scheduled doses not reported (2026-11-21 21:00 to 2026-11-22 21:00)", [kolkata[0]!.id]],
    ]);
  });
});

describe("the adherence module and the reads with a time of their own", () => {
  it("the module lays the schedule out to its latest log; /changes to its until, counting the doses due in between", () => {
    const upTo25 = tester.filter((l) => Date.parse(l.timestamp) <= Date.parse(t(25, 8, 5)));
    const metformin = payload(given(upTo25, TZ), "adherence").schedule.find((x) => x.rxnorm_cui === "860975");
    expect(metformin?.until).toBe(t(25, 8, 5));
    expect(metformin?.doses.at(-1)?.scheduled_time).toBe(t(25, 8));
    const missed = changesIn({ since: t(25, 12), until: t(26, 12) }, upTo25).find((c) => c.kind === "doses_not_reported");
    expect(missed).toMatchObject({ what: "Metformin: 1 scheduled dose not reported (scheduled 2026-11-26 08:00)" });
  });
});
