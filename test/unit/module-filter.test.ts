import { describe, expect, it } from "vitest";
import { filterEntities, filterSince } from "../../src/state/module-filter.js";
import { at, given, log, payload } from "./readmodels/given.js";

describe("narrowing a module", () => {
  it("since drops dated entries and daily rollups before it, keeping the entities", () => {
    const glucose = {
      days: [{ date: "2026-11-12", readings: 96 }, { date: "2026-11-13", readings: 96 }, { date: "2026-11-14", readings: 96 }],
      recent: [{ timestamp: "2026-11-13T23:45:00Z", glucose_mg_dl: 120 }, { timestamp: "2026-11-14T00:00:00+00:00", glucose_mg_dl: 130 }],
      latest: { timestamp: "2026-11-14T00:00:00Z", glucose_mg_dl: 130 },
    };
    expect(filterSince(glucose, "2026-11-14T00:00:00.000Z")).toEqual({
      days: [{ date: "2026-11-14", readings: 96 }], recent: [glucose.recent[1]], latest: glucose.latest,
    });
    const symptoms = { symptoms: [{ name: "pain", history: [{ timestamp: "2026-11-01T08:00:00Z", score: 3 }, { timestamp: "2026-11-20T08:00:00Z", score: 7 }] }] };
    expect(filterSince(symptoms, "2026-11-10T00:00:00Z")).toEqual({ symptoms: [{ name: "pain", history: [symptoms.symptoms[0]!.history[1]] }] });
  });

  it("since drops the scheduled doses laid out before it, as it drops the reported ones", () => {
    const listed = log("medication_list_update", at(1, 7), { medications: [{ action: "add", medication_name: "Metformin", rxnorm_cui: "860975", schedule_times: ["08:00", "20:00"] }] });
    const reports = [2, 3, 4, 5, 6].map((d) => log("medication_adherence", at(d, 8, 5), { medication_adherence: [{ status: "taken", rxnorm_cui: "860975", scheduled_time: at(d, 8) }] }));
    const adherence = payload(given([listed, ...reports]), "adherence");
    const since = at(5, 0);
    expect(adherence.schedule[0]!.doses.some((d) => d.scheduled_time < since)).toBe(true);

    const narrowed = filterSince(adherence, since) as typeof adherence;
    const [schedule] = narrowed.schedule;
    expect(schedule!.doses.map((d) => `${d.scheduled_time} ${d.status}`)).toEqual([`${at(5, 8)} taken`, `${at(5, 20)} unreported`, `${at(6, 8)} taken`]);
    expect(narrowed.recent.map((d) => d.timestamp)).toEqual([at(5, 8, 5), at(6, 8, 5)]);
    // The medication stays with its counts over the tracked week.
    expect(schedule!.expected).toBe(adherence.schedule[0]!.expected);
  });

  it("entities match by name, alias, code or measurement, ignoring case, spaces, underscores and hyphens", () => {
    const labs = { results: [{ loinc_code: "4548-4", test_name: "Hemoglobin A1c" }, { loinc_code: "2823-3", test_name: "Potassium" }], abnormal: [] };
    expect(filterEntities(labs, ["4548-4", "sodium"])).toEqual({ payload: { results: [labs.results[0]], abnormal: [] }, not_found: ["sodium"] });
    expect(filterEntities(labs, ["hemoglobin-a1c"]).payload).toEqual({ results: [labs.results[0]], abnormal: [] });
    const vitals = {
      latest: { heart_rate_bpm: { value: 70 }, weight_kg: { value: 80 } },
      history: [{ timestamp: "t1", measurements: { heart_rate_bpm: 70 } }, { timestamp: "t2", measurements: { weight_kg: 80 } }],
    };
    expect(filterEntities(vitals, ["Heart rate bpm"])).toEqual({
      payload: { latest: { heart_rate_bpm: { value: 70 } }, history: [vitals.history[0]] }, not_found: [],
    });
    const symptoms = { symptoms: [{ name: "shortness_of_breath", aliases: ["dyspnea"] }, { name: "pain", aliases: [] }] };
    expect(filterEntities(symptoms, ["Dyspnea"]).payload).toEqual({ symptoms: [symptoms.symptoms[0]] });
  });
});
