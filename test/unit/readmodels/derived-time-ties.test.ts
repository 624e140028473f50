import { describe, expect, it } from "vitest";
import { at, given, log, payload } from "./given.js";

/**
 * Two logs whose derived time (a lab's collection time, a vital's collection time) is
 * the same but whose event timestamps differ: the one later in the fold (later event
 * timestamp) is the latest, whichever was accepted first.
 */
describe("ties on a derived time follow the fold's order, not acceptance alone", () => {
  const collected = "2025-03-01T08:00:00.000Z";
  const lab = (ts: string, value: number, flag: string, status: string) =>
    log("lab_results", ts, { collection_datetime: collected, results: [{ loinc_code: "2823-3", test_name: "Potassium", value_numeric: value, unit: "mmol/L", abnormal_flag: flag, result_status: status }] });

  it("a corrected lab result accepted before the preliminary it corrects still wins", () => {
    const corrected = lab(at(2, 9), 4.2, "N", "corrected"); // accepted first: the lower id
    const preliminary = lab(at(1, 9), 6.8, "HH", "preliminary");
    for (const order of [[corrected, preliminary], [preliminary, corrected]]) {
      const labs = payload(given(order), "lab_results");
      expect(labs.results[0]!.latest).toMatchObject({ value_numeric: 4.2, log_id: corrected.id });
      expect(labs.results[0]!.history.map((h) => h.value_numeric)).toEqual([6.8, 4.2]);
      expect(labs.abnormal).toEqual([]);
    }
  });

  it("a vital with the same collection time: the later event timestamp is the latest", () => {
    const later = log("vitals_measurement", at(2, 9), { collection_datetime: collected, measurements: { systolic_bp_mmhg: 120, diastolic_bp_mmhg: 80 } });
    const earlier = log("vitals_measurement", at(1, 9), { collection_datetime: collected, measurements: { systolic_bp_mmhg: 180, diastolic_bp_mmhg: 110 } });
    const vitals = payload(given([later, earlier]), "vitals") as unknown as { latest: Record<string, { value: number }> };
    expect(vitals.latest.systolic_bp_mmhg!.value).toBe(120);
  });
});
