import { describe, expect, it } from "vitest";
import { vitalSignObservations } from "../../../fhir/outbound/vitals.js";
import { renderView } from "../../../readmodels/views/index.js";
import { blockOf } from "../views/fixtures.js";
import { PATIENT } from "../fhir/outbound-fixture.js";
import { applyInArrivalOrder, given, log, payload } from "./given.js";

const AT = "2026-11-20T13:00:00Z";
const vitals = (measurements: Record<string, number>, t = AT) =>
  log("vitals_measurement", t, { measurements, context: { position: null, fasting: null }, source: { type: "ehr" }, collection_datetime: t });
const first = vitals({ weight_kg: 83.91, heart_rate_bpm: 70 });
const corrected = vitals({ weight_kg: 71.67 });
const earlier = vitals({ weight_kg: 72 }, "2026-11-20T08:00:00Z");

describe("vitals: a measurement sent again for the same instant replaces the earlier one", () => {
  it("the history holds the later value alone (the earlier log keeps what was not measured again), latest and the day's weight follow it", () => {
    const d = payload(given([earlier, first, corrected]), "vitals");
    expect(d.history.map((h) => [h.log_id, h.measurements, h.replaced])).toEqual([
      [earlier.id, { weight_kg: 72 }, {}],
      [first.id, { heart_rate_bpm: 70 }, {}],
      [corrected.id, { weight_kg: 71.67 }, { weight_kg: { value: 83.91, log_id: first.id } }],
    ]);
    expect(d.latest.weight_kg).toEqual({ value: 71.67, timestamp: "2026-11-20T13:00:00.000Z", log_id: corrected.id });
    expect(d.daily_weight).toEqual([{ date: "2026-11-20", weight_kg: { count: 2, sum: 72 + 71.67, mean: 71.84, min: 71.67, max: 72 } }]);
    // Arrival order does not matter once sorted, and a measurement alone is dropped with what it held.
    expect(payload(applyInArrivalOrder([first, corrected]), "vitals").history.map((h) => h.log_id)).toEqual([first.id, corrected.id]);
    const resent = vitals({ weight_kg: 80 });
    expect(payload(given([resent, corrected]), "vitals").history.map((h) => h.log_id)).toEqual([resent.id]);
  });

  it("the vitals view's week counts one reading of the replaced weight", () => {
    const week = blockOf(renderView("vitals_snapshot", given([first, corrected])), "week_summary");
    expect(week.text).toContain("**Weight**: 71.7 kg (1 reading)");
    expect(week.text).not.toContain("83.9");
  });

  it("FHIR out shows the corrected weight once, as corrected; a value sent again unchanged stays final", () => {
    const obs = vitalSignObservations({ state: given([first, corrected]), patient: PATIENT }).map((m) => m.resource);
    expect(obs.map((o) => [o.code.coding?.[0]?.code, o.valueQuantity?.value, o.status])).toEqual([["8867-4", 70, "final"], ["29463-7", 71.67, "corrected"]]);
    const same = vitalSignObservations({ state: given([vitals({ heart_rate_bpm: 70 }), vitals({ heart_rate_bpm: 70 })]), patient: PATIENT });
    expect(same.map((m) => m.resource.status)).toEqual(["final"]);
  });
});
