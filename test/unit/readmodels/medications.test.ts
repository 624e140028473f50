import { describe, expect, it } from "vitest";
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
    expect(m.sources).toEqual([{ source: "ehr", log_id: expect.any(String), timestamp: at(1, 8) }]);
  });

  it("matches by RxNorm CUI, else by normalized name, and no longer lists a deleted medication", () => {
    const s = given([
      list([{ action: "add", medication_name: "Metformin", dose: "500 mg" }, { action: "add", medication_name: "Lisinopril", rxnorm_cui: "29046" }]),
      list([{ action: "update", medication_name: "  metformin ", rxnorm_cui: "860975", dose: "1000 mg" }], at(2)),
      list([{ action: "delete", rxnorm_cui: "29046" }], at(3)),
    ]);
    const meds = payload(s, "medications").medications;
    expect(meds.map((m) => [m.medication_name, m.rxnorm_cui, m.dose])).toEqual([["  metformin ", "860975", "1000 mg"]]);
    // remove is the same action as delete.
    const removed = given([list([{ action: "add", medication_name: "Lisinopril", rxnorm_cui: "29046" }]), list([{ action: "remove", medication_name: "lisinopril" }], at(2))]);
    expect(payload(removed, "medications").medications).toEqual([]);
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

  it("marks a dose on time within the medication's window and late outside it", () => {
    const s = given([
      setup,
      dose(at(1, 9, 25), { status: "taken", rxnorm_cui: "860975", scheduled_time: at(1, 9) }),
      dose(at(2, 8, 20), { status: "taken", rxnorm_cui: "860975", scheduled_time: at(2, 9) }),
      dose(at(3, 9), { status: "skipped", medication_name: "METFORMIN", scheduled_time: at(3, 9) }),
      dose(at(4, 14), { status: "taken", medication_name: "metformin" }),
    ]);
    const a = payload(s, "adherence");
    expect(a.recent.map((d) => [d.deviation_minutes, d.on_time])).toEqual([[25, true], [-40, false], [0, null], [null, null]]);
    expect(a.medications).toEqual([{
      medication_name: "Metformin", rxnorm_cui: "860975", taken: 3, skipped: 1, on_time: 1, late: 1,
      last_status: "taken", last_event_at: at(4, 14), last_taken_at: at(4, 14),
    }]);
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
    expect(recent[0].timestamp).toBe(at(1, 10));
    expect(recent[49].timestamp).toBe(at(3, 11));
  });

  it("records adverse events against the listed medication they name", () => {
    const s = given([setup, log("medication_adverse_event", at(2), { events: [{ medication_identifier: "860975", description: "nausea", severity: "mild" }] })]);
    expect(payload(s, "adherence").adverse_events).toEqual([expect.objectContaining({ medication_name: "Metformin", rxnorm_cui: "860975", severity: "mild" })]);
  });
});
