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

  it("counts the week's doses per medication, leaving out older ones", () => {
    const b = blockOf(v, "adherence_week");
    expect(b.text).toBe([
      "- **Metformin**: 2 of 3 doses taken, 1 skipped; 1 on time, 1 late",
      "- **Lisinopril**: 1 of 1 dose taken, 0 skipped; 1 on time, 0 late",
    ].join("\n"));
    expect(b.refs).toEqual([f.onTime.id, f.skipped.id, f.late.id, f.lisinopril.id].sort());
    expect(b.refs).not.toContain(f.oldDose.id);
  });

  it("puts adverse events in the week or long-term segment by when they were reported", () => {
    expect(blockOf(v, "recent_adverse_events")).toMatchObject({ segment: "week", refs: [f.newAe.id], text: "- **Lisinopril**: dizziness (moderate), onset 2025-03-18, reported 2025-03-19" });
    expect(blockOf(v, "adverse_events")).toMatchObject({ segment: "long_term", refs: [f.oldAe.id], text: "- **Metformin**: nausea (mild), reported 2025-03-05" });
  });

  it("lists the week's missed doses to follow up, under the listed medication's name", () => {
    expect(blockOf(v, "missed_doses")).toMatchObject({ segment: "temp", refs: [f.skipped.id], text: "- **Metformin**: skipped, scheduled 2025-03-16 08:00" });
  });

  it("says so when a scheduled medication has no dose recorded in the week", () => {
    const s = given([...f.logs, log("medication_list_update", at(20, 12), { medications: [{ action: "add", medication_name: "Letrozole", dose: "2.5 mg", schedule_times: ["21:00"] }] })]);
    expect(blockOf(renderView("medication_snapshot", s), "adherence_week").text).toContain("- **Letrozole**: no doses recorded");
  });

  it("shows scheduled times in the patient's timezone", () => {
    const s = given(f.logs, "America/New_York");
    expect(blockOf(renderView("medication_snapshot", s), "missed_doses").text).toBe("- **Metformin**: skipped, scheduled 2025-03-16 04:00");
  });
});
