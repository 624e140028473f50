import { describe, expect, it } from "vitest";
import { atOrAfter, vitalsOutOfRange } from "../../../readmodels/findings.js";
import { clinicalChanges, inWindow } from "../../../readmodels/changes/index.js";
import { at, given, log } from "./given.js";

/** Each caller's window, said once: the alert from `since` inclusive, get_changes after `since` up to `until`. */
const fever = (t: string) => log("vitals_measurement", t, { measurements: { temperature_celsius: 38.4 }, context: {}, source: "clinic", collection_datetime: null });
const glucose = (t: string) => log("cgm_reading", t, { glucose_mg_dl: 52, sensor_timestamp: t });

describe("out of range, by window", () => {
  const since = at(2);
  const until = at(4);
  const logs = [fever(at(1)), fever(since), fever(at(3)), fever(until), fever(at(5)), glucose(since), glucose(until)];
  const state = given(logs);
  const id = (i: number) => logs[i]!.id;

  it("the provider alert counts a reading at `since` and every later one", () => {
    expect(vitalsOutOfRange(state, atOrAfter(since)).map((f) => f.log_ids[0])).toEqual([id(1), id(2), id(3), id(4)]);
  });

  it("get_changes leaves out the reading at `since` and keeps the one at `until`", () => {
    // As the route reads it: the states at both ends, and the logs with an event time in the window.
    const upTo = logs.slice(0, 4).concat(logs[5]!, logs[6]!);
    const c = clinicalChanges(given(logs.slice(0, 2)), given(upTo), { since, until }, upTo.filter((l) => inWindow(l.timestamp, { since, until })));
    expect(c.vitals.map((x) => x.log_ids[0])).toEqual([id(3), id(2)]);
    expect(c.devices.map((x) => [x.what, x.log_ids[0]])).toEqual([["CGM glucose 52 mg/dL", id(6)]]);
  });
});
