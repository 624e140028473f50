import { describe, expect, it } from "vitest";
import { clinicalChanges, inWindow, type ChangeWindow } from "../../../readmodels/changes/index.js";
import type { LogRecord } from "../../../readmodels/log-record.js";
import { given, log } from "./given.js";

/**
 * /changes over a window longer than what the modules keep (50 CGM readings, dose reports
 * and symptom reports; 100 vital-sign events): every reading, skip and report of the window
 * counts, read from its log, as the route passes them.
 */
const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();
const START = Date.UTC(2026, 10, 1);

function changesOver(w: ChangeWindow, logs: readonly LogRecord[]) {
  const upTo = (t: string) => given(logs.filter((l) => Date.parse(l.timestamp) <= Date.parse(t)));
  return clinicalChanges(upTo(w.since), upTo(w.until), w, logs.filter((l) => inWindow(l.timestamp, w)));
}

describe("changes over a long window", () => {
  const w = { since: iso(START - MIN), until: iso(START + 30 * 86_400_000) };

  it("lists every low CGM reading of the window, not only those among the newest 50", () => {
    const cgm = Array.from({ length: 100 }, (_, i) => {
      const t = iso(START + i * 5 * MIN);
      return log("cgm_reading", t, { glucose_mg_dl: i < 10 ? 45 : 120, sensor_timestamp: t });
    });
    const c = changesOver(w, cgm);
    expect(c.devices).toHaveLength(10);
    expect(c.devices.every((d) => d.what === "CGM glucose 45 mg/dL")).toBe(true);
  });

  it("counts a vital sign reported in the window though measured before it", () => {
    const late = log("vitals_measurement", iso(START + 86_400_000), { measurements: { systolic_bp_mmhg: 195, diastolic_bp_mmhg: 115 }, collection_datetime: iso(START - 2 * 86_400_000) });
    const c = changesOver(w, [late]);
    expect(c.vitals.map((v) => [v.what, v.at, v.log_ids])).toEqual([["Systolic BP 195 mmHg, Diastolic BP 115 mmHg", iso(START - 2 * 86_400_000), [late.id]]]);
  });

  it("leaves out a vital sign corrected for the same instant by a later log", () => {
    const taken = iso(START + 3_600_000);
    const high = log("vitals_measurement", iso(START + 2 * 3_600_000), { measurements: { systolic_bp_mmhg: 195 }, collection_datetime: taken });
    const corrected = log("vitals_measurement", iso(START + 3 * 3_600_000), { measurements: { systolic_bp_mmhg: 125 }, collection_datetime: taken });
    expect(changesOver(w, [high, corrected]).vitals).toEqual([]);
    expect(changesOver(w, [high]).vitals.map((v) => v.log_ids)).toEqual([[high.id]]);
  });

  it("lists every skipped dose of the window, less one taken after all, and counts every symptom report", () => {
    const med = log("medication_list_update", iso(START - 2 * MIN), { medications: [{ action: "add", medication_name: "Metformin", rxnorm_cui: "860975", schedule_times: ["08:00", "20:00"] }] });
    const doses = Array.from({ length: 60 }, (_, i) => {
      const scheduled = iso(START + i * 12 * 3_600_000);
      return log("medication_adherence", iso(Date.parse(scheduled) + 10 * MIN), { medication_adherence: [{ status: i % 3 === 0 ? "skipped" : "taken", rxnorm_cui: "860975", scheduled_time: scheduled }] });
    });
    // The first skip, reported taken after all an hour later.
    const tookAfterAll = log("medication_adherence", iso(START + 60 * MIN), { medication_adherence: [{ status: "taken", rxnorm_cui: "860975", scheduled_time: iso(START) }] });
    const pain = Array.from({ length: 80 }, (_, i) => log("symptom_report", iso(START + i * 6 * 3_600_000 + 30 * MIN), { instrument: "esas_r", symptoms: [{ name: "pain", score: i < 79 ? 2 : 7 }] }));
    const before = log("symptom_report", iso(START - 3 * MIN), { instrument: "esas_r", symptoms: [{ name: "pain", score: 2 }] });
    const c = changesOver(w, [med, before, ...doses, tookAfterAll, ...pain]);
    const skipped = c.medications.filter((m) => m.kind === "skipped_dose");
    expect(skipped).toHaveLength(19);
    expect(skipped.some((m) => m.log_ids[0] === doses[0]!.id)).toBe(false);
    expect(c.symptoms.map((s) => s.what)).toEqual(["pain: worsened, 2 (esas_r) → 7 (esas_r), severe (80 reports in the window)"]);
  });
});
