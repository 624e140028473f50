import { describe, expect, it } from "vitest";
import { LOG_TYPES } from "../../../catalog/log-types.js";
import { EVENT_MODULES, STABLE_MODULES } from "../../../readmodels/module.js";
import { compareLogs, sortLogs } from "../../../readmodels/order.js";
import { emptyPatientState, evolvePatient, isLate, toModuleRead } from "../../../readmodels/patient-state.js";
import { MODELS, MODULE_KEYS, modulesToRebuild, MODULE_VERSIONS } from "../../../readmodels/registry.js";
import { routeLog } from "../../../readmodels/routing.js";
import { at, given, log } from "./given.js";

function deepFreeze<T>(o: T): T {
  if (o && typeof o === "object") {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

describe("routing", () => {
  it("routes every catalog log type to at least one module", () => {
    for (const t of LOG_TYPES) expect(routeLog(t).length, t).toBeGreaterThan(0);
    expect(LOG_TYPES).toHaveLength(55);
  });

  it("agrees with the log types each module declares it handles", () => {
    for (const key of MODULE_KEYS) {
      const routed = LOG_TYPES.filter((t) => routeLog(t).includes(key));
      expect([...MODELS[key].handles].sort(), key).toEqual([...routed].sort());
    }
  });

  it("has exactly the contract's module keys, each with its kind", () => {
    for (const k of STABLE_MODULES) expect(MODELS[k].kind).toBe("stable");
    for (const k of EVENT_MODULES) expect(MODELS[k].kind).toBe("event");
    expect(MODULE_KEYS).toHaveLength(27);
  });
});

describe("evolvePatient", () => {
  it("reports a module as created by its first log and updated by later ones, with the changed fields", () => {
    const s0 = emptyPatientState("pat_1");
    const r1 = evolvePatient(s0, log("demographics", at(1), { name: "Ada" }));
    expect(r1.changes).toEqual([{ module_type: "demographics", kind: "stable", op: "created", fields: ["name", "sources"] }]);
    const r2 = evolvePatient(r1.state, log("demographics", at(2), { sex: "female" }));
    expect(r2.changes).toEqual([{ module_type: "demographics", kind: "stable", op: "updated", fields: ["sex", "sources"] }]);
    expect(r2.state.applied).toBe(2);
  });

  it("lists changed fields in code-unit order, whatever order the module wrote them in", () => {
    const r = evolvePatient(emptyPatientState("pat_1"), log("demographics", at(1), { sex: "female", name: "Ada" }));
    expect(r.changes[0]!.fields).toEqual(["name", "sex", "sources"]);
  });

  it("stamps modules with the event timestamps of their logs, not the wall clock", () => {
    const s = given([log("demographics", at(3), { name: "Ada" }), log("demographics", at(1), { sex: "female" })]);
    const entry = s.stable.demographics!;
    expect(entry.created_at).toBe(at(1));
    expect(entry.updated_at).toBe(at(3));
    expect(Object.keys(toModuleRead(entry))).toEqual(["module_type", "payload", "created_at", "updated_at"]);
  });

  it("never mutates the state or the log it is given", () => {
    const s = deepFreeze(given([log("symptom_report", at(1), { instrument: "esas_r", symptoms: [{ name: "pain", score: 3 }] })]));
    const l = deepFreeze(log("symptom_report", at(2), { instrument: "esas_r", symptoms: [{ name: "pain", score: 0, extensions: { a: { b: 1 } } }] }));
    expect(() => evolvePatient(s, l)).not.toThrow();
  });

  it("reports no change when a log changes nothing", () => {
    const s = given([log("symptom_detail", at(1), { symptom_type: "x" })]);
    expect(s.event.symptoms).toBeUndefined();
    expect(s.applied).toBe(1);
  });

  it("lets a module read another module's state as it stood before the log", () => {
    const s = given([
      log("medication_list_update", at(1, 8), { medications: [{ action: "add", medication_name: "Metformin", schedule_times: ["09:00"], adherence_window_minutes: 15 }] }),
      log("medication_adherence", at(1, 9, 20), { medication_adherence: [{ status: "taken", medication_name: "metformin", scheduled_time: at(1, 9) }] }),
    ]);
    expect(s.event.adherence!.payload.recent[0]).toMatchObject({ window_minutes: 15, on_time: false, deviation_minutes: 20 });
  });
});

describe("order", () => {
  it("orders logs by event instant, then by acceptance key", () => {
    const a = log("user_login", "2025-03-01T00:00:00Z", {}, "log_b");
    const b = log("user_login", "2025-03-01T00:00:00.000Z", {}, "log_a");
    const c = log("user_login", "2025-02-28T23:59:59Z", {}, "log_c");
    expect(sortLogs([a, b, c]).map((l) => l.id)).toEqual(["log_c", "log_a", "log_b"]);
    expect(compareLogs(a, a)).toBe(0);
    expect(isLate(a, c)).toBe(true);
    expect(isLate(c, a)).toBe(false);
  });
});

describe("versions", () => {
  it("rebuilds a module whose version changed and every module that reads it", () => {
    expect(modulesToRebuild(MODULE_VERSIONS)).toEqual([]);
    expect(modulesToRebuild({ ...MODULE_VERSIONS, medications: 0 })).toEqual(["medications", "adherence"]);
  });
});

describe("unknown log types", () => {
  it("counts a log of a type this build does not know without changing any module", () => {
    const s0 = emptyPatientState("pat_1");
    const r = evolvePatient(s0, { ...log("user_login", at(1), {}), log_type: "future_type" as never });
    expect(r.changes).toEqual([]);
    expect(r.state).toMatchObject({ applied: 1, stable: {}, event: {} });
  });
});
