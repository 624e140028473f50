import { describe, expect, it } from "vitest";
import { buildCalendar, countsText, dayLabel, earlierReads, type ScheduleRead } from "../../../console/src/charts/adherence-days.js";

const read = (until: string, doses: [string, ScheduleRead["doses"][number]["status"]][], name = "Metformin"): ScheduleRead => ({
  medication_name: name,
  rxnorm_cui: null,
  until,
  doses: doses.map(([scheduled_time, status]) => ({ scheduled_time, status })),
});

describe("the dose adherence calendar's reads", () => {
  it("reads four weeks as overlapping weeks ending six days apart", () => {
    expect(earlierReads("2026-06-29T12:00:00.000Z")).toEqual(["2026-06-23T12:00:00.000Z", "2026-06-17T12:00:00.000Z", "2026-06-11T12:00:00.000Z", "2026-06-05T12:00:00.000Z"]);
  });
});

describe("the dose adherence calendar", () => {
  it("is empty without a scheduled medication", () => {
    expect(buildCalendar([[]], "UTC")).toEqual({ days: [], medications: [], counts: { taken: 0, skipped: 0, unreported: 0 } });
  });

  it("takes a dose in two reads from the later one, and lays doses out by the patient's local day", () => {
    const older = read("2026-06-02T09:00:00Z", [["2026-06-01T23:30:00Z", "unreported"], ["2026-06-02T08:00:00Z", "taken"]]);
    // Reported late: the later read has it as taken.
    const later = read("2026-06-03T09:00:00Z", [["2026-06-01T23:30:00Z", "taken"], ["2026-06-02T08:00:00Z", "taken"], ["2026-06-03T08:00:00Z", "skipped"]]);
    const cal = buildCalendar([[later], [older]], "Europe/Berlin");
    // 23:30 UTC on June 1 is 01:30 on June 2 in Berlin.
    expect(cal.days).toEqual(["2026-06-02", "2026-06-03"]);
    const [m] = cal.medications;
    expect(m?.days.get("2026-06-02")).toEqual([{ time: "01:30", status: "taken" }, { time: "10:00", status: "taken" }]);
    expect(m?.days.get("2026-06-03")).toEqual([{ time: "10:00", status: "skipped" }]);
    expect(countsText(cal.counts)).toBe("2 taken, 1 skipped, 0 not reported");
  });

  it("shows the days up to the latest read's, at most 28, with each medication apart", () => {
    const doses = (n: number) => Array.from({ length: n }, (_, i) => [new Date(Date.UTC(2026, 5, 1 + i, 8)).toISOString(), i % 2 ? "taken" : "unreported"] as [string, "taken" | "unreported"]);
    const cal = buildCalendar([[read("2026-07-10T09:00:00Z", doses(40)), read("2026-07-10T09:00:00Z", [["2026-07-10T21:00:00Z", "skipped"]], "Aspirin")]], "UTC");
    expect(cal.days).toHaveLength(28);
    expect(cal.days[0]).toBe("2026-06-13");
    expect(cal.days[27]).toBe("2026-07-10");
    expect(cal.medications.map((m) => [m.name, countsText(m.counts)])).toEqual([["Aspirin", "0 taken, 1 skipped, 0 not reported"], ["Metformin", "14 taken, 0 skipped, 14 not reported"]]);
  });

  it("names each day with its weekday", () => {
    expect(dayLabel("2026-06-01")).toBe("Mon 2026-06-01");
  });
});
