import { describe, expect, it } from "vitest";
import type { Observation } from "@medplum/fhirtypes";
import { labObservations } from "../../../fhir/outbound/labs.js";
import { given, log } from "../readmodels/given.js";
import { PATIENT } from "./outbound-fixture.js";

const DRAW = "2026-11-20T13:00:00Z";
const hgb = (t: string, result: Record<string, unknown>, collected = DRAW) =>
  log("lab_results", t, { collection_datetime: collected, results: [{ loinc_code: "718-7", test_name: "Hemoglobin", unit: "g/dL", reference_range_low: 12, reference_range_high: 16, ...result }] });
const labs = (...logs: ReturnType<typeof log>[]) =>
  labObservations({ state: given(logs), patient: PATIENT }).map((m) => m.resource);
const shown = (obs: Observation[]) => obs.map((o) => [o.effectiveDateTime, o.valueQuantity?.value, o.status, o.interpretation?.[0]?.coding?.[0]?.code]);

describe("lab Observations out: a test's results as they stand", () => {
  it("a corrected value replaces the final one of the same draw: one Observation, corrected", () => {
    const obs = labs(hgb(DRAW, { value_numeric: 13.2, result_status: "final" }), hgb(DRAW, { value_numeric: 10.1, abnormal_flag: "L", result_status: "corrected" }));
    expect(shown(obs)).toEqual([["2026-11-20T13:00:00.000Z", 10.1, "corrected", "L"]]);
  });

  it("never presents a preliminary value as final: it is left out once replaced, and keeps its status while it stands", () => {
    const prelim = hgb(DRAW, { value_numeric: 5.5, result_status: "preliminary" });
    expect(shown(labs(prelim))).toEqual([["2026-11-20T13:00:00.000Z", 5.5, "preliminary", "L"]]);
    expect(shown(labs(prelim, hgb(DRAW, { value_numeric: 6.1, result_status: "corrected" })))).toEqual([["2026-11-20T13:00:00.000Z", 6.1, "corrected", "L"]]);
    expect(shown(labs(prelim, hgb(DRAW, { value_numeric: 6.1, result_status: "final" })))).toEqual([["2026-11-20T13:00:00.000Z", 6.1, "final", "L"]]);
  });

  it("earlier draws keep their own status; a final value changed after a final one is a correction, the same one sent again is not", () => {
    const before = hgb("2026-11-10T13:00:00Z", { value_numeric: 14, result_status: "preliminary" }, "2026-11-10T13:00:00Z");
    const obs = labs(before, hgb(DRAW, { value_numeric: 13.2, result_status: "final" }), hgb(DRAW, { value_numeric: 12.4, result_status: "final" }));
    expect(shown(obs)).toEqual([["2026-11-10T13:00:00.000Z", 14, "preliminary", "N"], ["2026-11-20T13:00:00.000Z", 12.4, "corrected", "N"]]);
    const again = labs(hgb(DRAW, { value_numeric: 13.2, result_status: "final" }), hgb(DRAW, { value_numeric: 13.2 }));
    expect(shown(again)).toEqual([["2026-11-20T13:00:00.000Z", 13.2, "final", "N"]]);
  });
});
