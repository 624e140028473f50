import { describe, expect, it } from "vitest";
import { renderView } from "../../../readmodels/views/index.js";
import { at, given, log } from "../readmodels/given.js";
import { blockOf, medicationLogs, shape } from "./fixtures.js";

describe("medication_snapshot", () => {
  const f = medicationLogs();
  const v = renderView("medication_snapshot", given(f.logs));

  it("renders the list, the week's adherence, adverse events by date and missed doses", () => {
    expect(shape(v)).toEqual([
      ["current_medications", "long_term"], ["adherence_week", "week"], ["recent_adverse_events", "week"],
      ["adverse_events", "long_term"], ["missed_doses", "temp"],
    ]);
  });

  it("lists current medications with dose, frequency, route and schedule", () => {
    const b = blockOf(v, "current_medications");
    expect(b.text).toBe([
      "- **Metformin** 500 mg, BID, oral; at 08:00, 20:00; since 2025-01-10; prescribed by Dr. Rao",
      "- **Lisinopril** 10 mg, daily; at 09:00",
    ].join("\n"));
    expect(b.refs).toEqual([f.list.id]);
  });

  it("counts the week's doses per medication, leaving out older ones, and the scheduled doses nobody reported", () => {
    const b = blockOf(v, "adherence_week");
    // The week is the 7 calendar days ending on the as-of day, the 14th to the 20th: Metformin BID from the 14th 08:00 to
    // the 20th 08:00 (13 times, 3 reported); Lisinopril daily at 09:00 since listed (7, 1 reported).
    expect(b.text).toBe([
      "- **Metformin**: 2 of 13 scheduled doses taken, 1 skipped, 10 not reported; 1 on time, 0 early, 1 late",
      "- **Lisinopril**: 1 of 7 scheduled doses taken, 0 skipped, 6 not reported; 1 on time, 0 early, 0 late",
    ].join("\n"));
    // The listing that set the schedules is the source of the unreported counts.
    expect(b.refs).toEqual([f.list.id, f.onTime.id, f.skipped.id, f.late.id, f.lisinopril.id].sort());
    expect((b.data as { scheduled: unknown }).scheduled).toEqual([
      { medication_name: "Metformin", expected: 13, unreported: 10 }, { medication_name: "Lisinopril", expected: 7, unreported: 6 },
    ]);
    expect(b.refs).not.toContain(f.oldDose.id);
  });

  it("puts adverse events in the week or long-term segment by when they were reported", () => {
    expect(blockOf(v, "recent_adverse_events")).toMatchObject({ segment: "week", refs: [f.newAe.id], text: "- **Lisinopril**: dizziness (moderate), onset 2025-03-18, reported 2025-03-19" });
    expect(blockOf(v, "adverse_events")).toMatchObject({ segment: "long_term", refs: [f.oldAe.id], text: "- **Metformin**: nausea (mild), reported 2025-03-05" });
  });

  it("lists the week's missed doses to follow up, skipped or never reported, under the listed medication's name", () => {
    expect(blockOf(v, "missed_doses")).toMatchObject({
      segment: "temp", refs: [f.list.id, f.skipped.id],
      text: [
        "- **Metformin**: 10 scheduled doses not reported, 2025-03-14 08:00 to 2025-03-20 08:00",
        "- **Lisinopril**: 6 scheduled doses not reported, 2025-03-14 09:00 to 2025-03-19 09:00",
        "- **Metformin**: skipped, scheduled 2025-03-16 08:00",
      ].join("\n"),
    });
  });

  it("says so when a scheduled medication has no dose recorded in the week", () => {
    const s = given([...f.logs, log("medication_list_update", at(20, 12), { medications: [{ action: "add", medication_name: "Letrozole", dose: "2.5 mg", schedule_times: ["21:00"] }] })]);
    expect(blockOf(renderView("medication_snapshot", s), "adherence_week").text).toContain("- **Letrozole**: no doses recorded");
  });

  it("shows scheduled times in the patient's timezone", () => {
    const s = given(f.logs, "America/New_York");
    expect(blockOf(renderView("medication_snapshot", s), "missed_doses").text.split("\n")).toEqual([
      // 08:00 and 20:00 in New York; the 20th's 08:00 (12:00Z, the as-of time) is still within its window.
      "- **Metformin**: 9 scheduled doses not reported, 2025-03-14 08:00 to 2025-03-19 20:00",
      "- **Lisinopril**: 6 scheduled doses not reported, 2025-03-14 09:00 to 2025-03-19 09:00",
      "- **Metformin**: skipped, scheduled 2025-03-16 04:00",
    ]);
  });

  it("shows a BID medication with one reported dose in six days as mostly unreported, not fully adherent", () => {
    const s = given([
      log("medication_list_update", at(1, 7), { medications: [{ action: "add", medication_name: "Metformin", schedule_times: ["08:00", "20:00"] }] }),
      log("medication_adherence", at(1, 8, 5), { medication_adherence: [{ status: "taken", medication_name: "Metformin", scheduled_time: at(1, 8) }] }),
      log("medication_adherence", at(6, 21, 30), { medication_adherence: [{ status: "taken", medication_name: "Aspirin" }] }),
    ]);
    const view = renderView("medication_snapshot", s);
    expect(blockOf(view, "adherence_week").text).toContain("- **Metformin**: 1 of 12 scheduled doses taken, 0 skipped, 11 not reported; 1 on time, 0 early, 0 late");
    expect(blockOf(view, "missed_doses").text).toBe("- **Metformin**: 11 scheduled doses not reported, 2025-03-01 20:00 to 2025-03-06 20:00");
    expect(blockOf(view, "missed_doses").data).toEqual([{ medication: "Metformin", status: "unreported", scheduled_times: expect.any(Array) }]);
  });

  it("counts a scheduled dose reported twice once, and says it was reported taken twice", () => {
    const warfarin = log("medication_list_update", at(2, 5), { medications: [{ action: "add", medication_name: "Warfarin", schedule_times: ["08:00"] }] });
    const taken = (t: string) => log("medication_adherence", t, { medication_adherence: [{ status: "taken", medication_name: "Warfarin", scheduled_time: at(2, 8) }] });
    const view = renderView("medication_snapshot", given([warfarin, taken(at(2, 8, 5)), taken(at(2, 8, 10))]));
    expect(blockOf(view, "adherence_week").text).toBe(
      "- **Warfarin**: 1 of 1 scheduled dose taken, 0 skipped, 0 not reported; 1 on time, 0 early, 0 late; 2025-03-02 08:00 dose reported taken twice",
    );
    expect((blockOf(view, "adherence_week").data as { medications: unknown[] }).medications).toEqual([expect.objectContaining({ taken: 1, on_time: 1, repeated: [at(2, 8)] })]);
  });

  it("lets the latest report of a dose decide it: a dose skipped, then taken, is taken and not missed", () => {
    const s = given([
      log("medication_list_update", at(2, 5), { medications: [{ action: "add", medication_name: "Warfarin", schedule_times: ["08:00"] }] }),
      log("medication_adherence", at(2, 6), { medication_adherence: [{ status: "skipped", medication_name: "Warfarin", scheduled_time: at(2, 8) }] }),
      log("medication_adherence", at(2, 6, 30), { medication_adherence: [{ status: "taken", medication_name: "Warfarin", scheduled_time: at(2, 8) }] }),
    ]);
    const view = renderView("medication_snapshot", s);
    expect(blockOf(view, "adherence_week").text).toBe("- **Warfarin**: 1 of 1 scheduled dose taken, 0 skipped, 0 not reported; 0 on time, 1 early, 0 late");
    expect(shape(view).map(([id]) => id)).not.toContain("missed_doses");
  });

  it("says how many of the scheduled doses taken were reported without a scheduled time, and which reports were more", () => {
    const dose = (t: string, scheduled_time?: string) => log("medication_adherence", t, { medication_adherence: [{ status: "taken", medication_name: "Warfarin", scheduled_time }] });
    const s = given([
      log("medication_list_update", at(2, 5), { medications: [{ action: "add", medication_name: "Warfarin", schedule_times: ["08:00"] }] }),
      dose(at(2, 8, 10)), dose(at(3, 7, 50)), dose(at(3, 8, 20)), dose(at(4, 8, 5), at(4, 8)),
    ]);
    // 08:00 on the 2nd to the 8th; the 3rd's dose is the later of its two reports.
    expect(blockOf(renderView("medication_snapshot", s, at(8, 12)), "adherence_week").text).toBe(
      "- **Warfarin**: 3 of 7 scheduled doses taken (2 of them reported without a scheduled time), 0 skipped, 4 not reported; " +
      "1 on time, 0 early, 0 late; 1 more reported without a scheduled time",
    );
  });

  it("counts a dose taken before its window as early, not late", () => {
    const s = given([
      log("medication_list_update", at(2, 5), { medications: [{ action: "add", medication_name: "Metformin", schedule_times: ["08:00"] }] }),
      log("medication_adherence", at(2, 6), { medication_adherence: [{ status: "taken", medication_name: "Metformin", scheduled_time: at(2, 8) }] }),
    ]);
    expect(blockOf(renderView("medication_snapshot", s), "adherence_week").text).toBe(
      "- **Metformin**: 1 of 1 scheduled dose taken, 0 skipped, 0 not reported; 0 on time, 1 early, 0 late",
    );
  });

  it("shows a start or onset date sent as midnight UTC as the date written, in any zone", () => {
    const s = given([
      log("medication_list_update", at(1), { medications: [{ action: "add", medication_name: "Metformin", start_date: "2025-01-10T00:00:00Z" }] }),
      log("medication_adverse_event", at(19), { events: [{ medication_identifier: "Metformin", description: "nausea", onset_date: "2025-03-18T00:00:00+00:00" }] }),
    ], "America/New_York");
    const view = renderView("medication_snapshot", s);
    expect(blockOf(view, "current_medications").text).toBe("- **Metformin**; since 2025-01-10");
    expect(blockOf(view, "recent_adverse_events").text).toBe("- **Metformin**: nausea, onset 2025-03-18, reported 2025-03-19");
  });
});
