import { describe, expect, it } from "vitest";
import { moduleEntry } from "../../../readmodels/patient-state.js";
import { at, given, log } from "./given.js";
import { payload } from "./given.js";

const list = (meds: Record<string, unknown>[], t = at(1, 8)) => log("medication_list_update", t, { medications: meds, source: "ehr" });

describe("medications", () => {
  it("lists medications in the contract's shape, with the default adherence window", () => {
    const s = given([list([{ action: "add", medication_name: "Metformin", rxnorm_cui: "860975", dose: "500 mg", frequency: "BID", schedule_times: ["08:00", "20:00"] }])]);
    const [m] = payload(s, "medications").medications;
    expect(m).toMatchObject({
      medication_name: "Metformin", rxnorm_cui: "860975", dose: "500 mg", dose_unit: null, frequency: "BID", route: null, form: null,
      schedule_times: ["08:00", "20:00"], adherence_window_minutes: 60, start_date: null, prescribed_by: null, updated_at: at(1, 8),
    });
    expect(m?.sources).toEqual([{ source: "ehr", log_id: expect.any(String), timestamp: at(1, 8) }]);
  });

  it("matches by RxNorm CUI, else by normalized name, and no longer lists a deleted medication", () => {
    const s = given([
      list([{ action: "add", medication_name: "Metformin", dose: "500 mg" }, { action: "add", medication_name: "Lisinopril", rxnorm_cui: "29046" }]),
      list([{ action: "update", medication_name: "  metformin ", rxnorm_cui: "860975", dose: "1000 mg" }], at(2)),
      list([{ action: "delete", rxnorm_cui: "29046" }], at(3)),
    ]);
    const meds = payload(s, "medications").medications;
    expect(meds.map((m) => [m.medication_name, m.rxnorm_cui, m.dose])).toEqual([["Metformin", "860975", "1000 mg"]]);
    // remove is the same action as delete.
    const removed = given([list([{ action: "add", medication_name: "Lisinopril", rxnorm_cui: "29046" }]), list([{ action: "remove", medication_name: "lisinopril" }], at(2))]);
    expect(payload(removed, "medications").medications).toEqual([]);
  });

  it("keeps the listed name when an update only names the medication, and stores a new name trimmed", () => {
    const s = given([
      list([{ action: "add", medication_name: "Aspirin", rxnorm_cui: "1191", dose: "81 mg" }]),
      list([{ action: "update", medication_name: "ASPIRIN ", dose: "100 mg" }], at(2)),
      log("medication_adverse_event", at(3), { events: [{ medication_identifier: "aspirin", description: "bruising" }] }),
    ]);
    expect(payload(s, "medications").medications.map((m) => [m.medication_name, m.dose])).toEqual([["Aspirin", "100 mg"]]);
    expect(payload(s, "adherence").adverse_events[0]?.medication_name).toBe("Aspirin");
    // Matched by its code under another name: a rename, written without the spaces around it.
    const renamed = given([list([{ action: "add", medication_name: "Aspirin", rxnorm_cui: "1191" }]), list([{ action: "update", rxnorm_cui: "1191", medication_name: " Acetylsalicylic acid " }], at(2))]);
    expect(payload(renamed, "medications").medications[0]?.medication_name).toBe("Acetylsalicylic acid");
    const added = given([list([{ action: "add", medication_name: "  Lisinopril\t" }])]);
    expect(payload(added, "medications").medications[0]?.medication_name).toBe("Lisinopril");
  });

  it("keeps the newer field value when an older update is applied later", () => {
    const s = given([
      list([{ action: "add", medication_name: "Metformin", dose: "500 mg", extensions: { brand: "A" } }], at(1)),
      list([{ action: "update", medication_name: "metformin", dose: "1000 mg", extensions: { brand: "B", note: "x" } }], at(3)),
    ]);
    expect(payload(s, "medications").medications[0]).toMatchObject({ dose: "1000 mg", extensions: { brand: "B", note: "x" }, updated_at: at(3) });
  });
});

describe("adherence", () => {
  const setup = list([{ action: "add", medication_name: "Metformin", rxnorm_cui: "860975", schedule_times: ["09:00"], adherence_window_minutes: 30 }]);
  const dose = (t: string, d: Record<string, unknown>) => log("medication_adherence", t, { medication_adherence: [d] });

  it("marks a dose on time within the medication's window, and early or late outside it", () => {
    const s = given([
      setup,
      dose(at(1, 9, 25), { status: "taken", rxnorm_cui: "860975", scheduled_time: at(1, 9) }),
      dose(at(2, 8, 20), { status: "taken", rxnorm_cui: "860975", scheduled_time: at(2, 9) }),
      dose(at(3, 9), { status: "skipped", medication_name: "METFORMIN", scheduled_time: at(3, 9) }),
      dose(at(4, 14), { status: "taken", medication_name: "metformin" }),
      dose(at(5, 11), { status: "taken", rxnorm_cui: "860975", scheduled_time: at(5, 9) }),
    ]);
    const a = payload(s, "adherence");
    expect(a.recent.map((d) => [d.deviation_minutes, d.on_time, d.timing])).toEqual([
      [25, true, "on_time"], [-40, false, "early"], [0, null, null], [null, null, null], [120, false, "late"],
    ]);
    expect(a.medications).toEqual([{
      medication_name: "Metformin", rxnorm_cui: "860975", taken: 4, skipped: 1, on_time: 1, early: 1, late: 1, repeated: 0,
      last_status: "taken", first_event_at: at(1, 9, 25), last_event_at: at(5, 11), last_taken_at: at(5, 11),
    }]);
  });

  it("counts a scheduled dose once, as its latest report says, and marks a second taken report as a repeat", () => {
    const first = dose(at(1, 9, 5), { status: "taken", rxnorm_cui: "860975", scheduled_time: at(1, 9) });
    const again = dose(at(1, 9, 10), { status: "taken", medication_name: "metformin", scheduled_time: "2025-03-01T09:00:00Z" });
    const skip = dose(at(2, 7), { status: "skipped", rxnorm_cui: "860975", scheduled_time: at(2, 9) });
    const took = dose(at(2, 7, 30), { status: "taken", rxnorm_cui: "860975", scheduled_time: at(2, 9) });
    const logs = [setup, first, again, skip, took];
    const a = payload(given(logs), "adherence");
    expect(a.medications[0]).toMatchObject({ taken: 2, skipped: 0, on_time: 1, early: 1, late: 0, repeated: 1, last_status: "taken" });
    expect(a.recent.map((d) => [d.log_id, d.superseded_by, d.repeat])).toEqual([
      [first.id, again.id, false], [again.id, null, true], [skip.id, took.id, false], [took.id, null, false],
    ]);
    expect(a.schedule[0]).toMatchObject({ expected: 2, taken: 2, skipped: 0, unreported: 0 });
    // The latest report decides whatever order the logs came in.
    expect(given([took, again, setup, skip, first])).toEqual(given(logs));
  });

  it("uses the default 60-minute window for a medication that is not listed", () => {
    const s = given([dose(at(1, 9, 50), { status: "taken", medication_name: "Aspirin", scheduled_time: at(1, 9) })]);
    expect(payload(s, "adherence").recent[0]).toMatchObject({ window_minutes: 60, on_time: true });
  });

  it("uses the window in force when the dose was taken, not a later one", () => {
    const s = given([
      setup,
      dose(at(1, 9, 45), { status: "taken", rxnorm_cui: "860975", scheduled_time: at(1, 9) }),
      list([{ action: "update", rxnorm_cui: "860975", adherence_window_minutes: 60 }], at(2)),
    ]);
    expect(payload(s, "adherence").recent[0]).toMatchObject({ window_minutes: 30, on_time: false });
  });

  it("bounds the recent doses to the latest 50 by event time", () => {
    const doses = Array.from({ length: 60 }, (_, i) => dose(at(1 + Math.floor(i / 24), i % 24), { status: "taken", medication_name: "X" }));
    const recent = payload(given([...doses].reverse()), "adherence").recent;
    expect(recent).toHaveLength(50);
    expect(recent[0]?.timestamp).toBe(at(1, 10));
    expect(recent[49]?.timestamp).toBe(at(3, 11));
  });

  it("records adverse events against the listed medication they name", () => {
    const s = given([setup, log("medication_adverse_event", at(2), { events: [{ medication_identifier: "860975", description: "nausea", severity: "mild" }] })]);
    expect(payload(s, "adherence").adverse_events).toEqual([expect.objectContaining({ medication_name: "Metformin", rxnorm_cui: "860975", severity: "mild" })]);
  });
});

describe("adherence schedule", () => {
  const bid = (t = at(1, 7), extra: Record<string, unknown> = {}) =>
    list([{ action: "add", medication_name: "Metformin", rxnorm_cui: "860975", schedule_times: ["08:00", "20:00"], ...extra }], t);
  const dose = (t: string, d: Record<string, unknown>) => log("medication_adherence", t, { medication_adherence: [d] });
  const other = (t: string) => dose(t, { status: "taken", medication_name: "Aspirin" });

  it("counts a scheduled dose nobody reported as unreported, up to the latest log the fold has seen", () => {
    const s = given([bid(), dose(at(1, 8, 5), { status: "taken", rxnorm_cui: "860975", scheduled_time: at(1, 8) }), other(at(6, 21, 30))]);
    const [m] = payload(s, "adherence").schedule;
    // Listed on the 1st at 07:00: 08:00 and 20:00 on days 1 to 6, all past their 60-minute window at 21:30 on the 6th.
    expect(m).toMatchObject({
      medication_name: "Metformin", rxnorm_cui: "860975", schedule_times: ["08:00", "20:00"], window_minutes: 60,
      since: at(1, 7), until: at(6, 21, 30), expected: 12, taken: 1, skipped: 0, unreported: 11,
    });
    expect(m?.doses[0]).toEqual({ scheduled_time: at(1, 8), status: "taken", log_id: expect.any(String) });
    expect(m?.doses.slice(1).every((d) => d.status === "unreported" && d.log_id === null)).toBe(true);
  });

  it("does not call a dose missed while its window is still open, nor past the latest log", () => {
    const s = given([bid(), other(at(1, 8, 30))]);
    expect(payload(s, "adherence").schedule[0]).toMatchObject({ expected: 0, unreported: 0, doses: [] });
    const later = given([bid(), other(at(1, 9))]);
    expect(payload(later, "adherence").schedule[0]).toMatchObject({ expected: 1, unreported: 1 });
    // A dose reported ahead of its time is counted for it.
    const ahead = given([bid(), dose(at(1, 7, 45), { status: "taken", medication_name: "Metformin", scheduled_time: at(1, 8) })]);
    expect(payload(ahead, "adherence").schedule[0]).toMatchObject({ expected: 1, taken: 1, unreported: 0 });
  });

  it("gives a report without scheduled_time to the nearest scheduled time, the latest report of a time winning", () => {
    const s = given([
      bid(),
      dose(at(1, 11), { status: "taken", medication_name: "metformin" }),
      dose(at(1, 19), { status: "skipped", medication_name: "metformin" }),
      dose(at(1, 21), { status: "taken", medication_name: "metformin" }),
      other(at(2, 12)),
    ]);
    expect(payload(s, "adherence").schedule[0]?.doses.map((d) => [d.scheduled_time, d.status])).toEqual([
      [at(1, 8), "taken"], [at(1, 20), "taken"], [at(2, 8), "unreported"],
    ]);
  });

  it("tracks from start_date in the patient's timezone, over the last 7 days only", () => {
    const s = given([bid(at(1, 7), { start_date: "2025-02-01" }), other(at(20, 12))], "America/New_York");
    const [m] = payload(s, "adherence").schedule;
    // 08:00 and 20:00 in New York (EDT from the 9th): 12:00Z and 00:00Z, after 13th 12:00Z up to 20th 12:00Z (still open).
    expect(m).toMatchObject({ since: at(13, 12), expected: 13, unreported: 13 });
    expect([m?.doses[0]?.scheduled_time, m?.doses[12]?.scheduled_time]).toEqual([at(14, 0), at(20, 0)]);
  });

  it("starts a medication without start_date at the scheduled time of a dose reported before it was listed", () => {
    const s = given([dose(at(1, 8, 30), { status: "taken", medication_name: "Metformin" }), bid(at(1, 12)), other(at(2, 9))]);
    expect(payload(s, "adherence").schedule[0]).toMatchObject({ since: at(1, 8), expected: 3, taken: 1, unreported: 2 });
  });

  it("keeps counting unreported doses when only the medication list changes after the last dose report", () => {
    const s = given([
      bid(at(1, 7)),
      dose(at(1, 8, 5), { status: "taken", rxnorm_cui: "860975", scheduled_time: at(1, 8) }),
      list([{ action: "add", medication_name: "Warfarin", schedule_times: ["18:00"] }], at(4, 6)),
    ]);
    const [m] = payload(s, "adherence").schedule;
    // 08:00 and 20:00 from the 1st to the 3rd, all past their window at 06:00 on the 4th: six, one taken.
    expect(m).toMatchObject({ medication_name: "Metformin", until: at(4, 6), expected: 6, taken: 1, unreported: 5 });
  });

  it("lays doses before a schedule change out on the times then in force", () => {
    const logs = [
      list([{ action: "add", medication_name: "Tamoxifen", schedule_times: ["08:00"] }], at(1, 6)),
      dose(at(2, 8), { status: "taken", medication_name: "Tamoxifen", scheduled_time: at(2, 8) }),
      list([{ action: "update", medication_name: "Tamoxifen", schedule_times: ["08:00", "20:00"] }], at(5, 6)),
      dose(at(8, 8), { status: "taken", medication_name: "Tamoxifen", scheduled_time: at(8, 8) }),
    ];
    const [m] = payload(given(logs), "adherence").schedule;
    // After 08:00 on the 1st (a week before the 8th): 08:00 on the 2nd to the 8th, and 20:00 only from the 5th.
    expect(m).toMatchObject({ expected: 10, taken: 2, unreported: 8 });
    expect(m?.doses.filter((d) => d.scheduled_time.endsWith("T20:00:00.000Z")).map((d) => d.scheduled_time)).toEqual([at(5, 20), at(6, 20), at(7, 20)]);
    // The same when the change arrives last (a late log: the fold sorts it into place).
    expect(payload(given([logs[0]!, logs[1]!, logs[3]!, logs[2]!]), "adherence").schedule[0]).toEqual(m);
  });

  it("lays a listing's schedule out at its own time: a dose due before the listing's log is unreported with no other log", () => {
    const listing = log("medication_list_update", "2026-11-20T01:00:00Z", { medications: [{ action: "add", medication_name: "Tacrolimus", start_date: "2026-11-20", schedule_times: ["08:00"] }] });
    const s = given([listing], "Asia/Tokyo");
    // 08:00 in Tokyo on the 20th is 23:00Z on the 19th; its window closed before the listing's 10:00.
    expect(payload(s, "adherence").schedule).toEqual([expect.objectContaining({
      until: listing.timestamp, expected: 1, unreported: 1, doses: [{ scheduled_time: "2026-11-19T23:00:00.000Z", status: "unreported", log_id: null }],
    })]);
    expect(moduleEntry(s, "adherence")?.created_at).toBe(listing.timestamp);
  });

  it("does not track a medication without schedule_times", () => {
    const s = given([list([{ action: "add", medication_name: "Aspirin" }]), other(at(3))]);
    expect(payload(s, "adherence").schedule).toEqual([]);
  });
});
