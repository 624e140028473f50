import { describe, expect, it } from "vitest";
import { moduleReadJson } from "../../../infra/redis/module-read-json.js";
import { LOG_TYPES } from "../../../catalog/log-types.js";
import { toModuleRead } from "../../../readmodels/patient-state.js";
import { given, log } from "../readmodels/given.js";
import { SAMPLES } from "../readmodels/samples.js";

/** Every module entry of a state that every log type has touched, twice. */
function entries() {
  const logs = LOG_TYPES.flatMap((t, i) => [
    log(t, `2025-03-01T${String(i % 24).padStart(2, "0")}:00:00Z`, SAMPLES[t]),
    log(t, `2025-03-02T${String(i % 24).padStart(2, "0")}:30:00Z`, SAMPLES[t]),
  ]);
  const s = given(logs, "America/New_York");
  return [...Object.values(s.stable), ...Object.values(s.event)];
}

describe("moduleReadJson (a stored module entry as a read answers it, without parsing)", () => {
  it("gives exactly the JSON of the read shape for every module the fold builds", () => {
    const all = entries();
    expect(all.length).toBeGreaterThan(20);
    for (const e of all) expect(moduleReadJson(JSON.stringify(e))).toBe(JSON.stringify(toModuleRead(e)));
  });

  it("cuts at the entry's own clocks when the payload has a clocks key or text that looks like one", () => {
    const e = {
      module_type: "preferences",
      payload: { clocks: { a: 1 }, note: ',"clocks":{"x":1}}', extensions: { clocks: "tick" } },
      created_at: "2025-03-01T00:00:00Z",
      updated_at: null,
      clocks: { '["note"]': "2025-03-01T00:00:00Z" },
    };
    expect(JSON.parse(moduleReadJson(JSON.stringify(e)))).toEqual(toModuleRead(e as never));
  });

  it("parses text of any other layout rather than cutting it", () => {
    const e = { clocks: { '["a"]': "2025-03-01T00:00:00Z" }, module_type: "preferences", payload: { a: 1 }, created_at: "2025-03-01T00:00:00Z", updated_at: "2025-03-01T00:00:00Z" };
    expect(JSON.parse(moduleReadJson(JSON.stringify(e)))).toEqual({ module_type: "preferences", payload: { a: 1 }, created_at: "2025-03-01T00:00:00Z", updated_at: "2025-03-01T00:00:00Z" });
  });
});
