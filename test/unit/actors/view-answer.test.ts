import { describe, expect, it } from "vitest";
import { applyInOrder, emptyStored } from "../../../actors/apply-logs.js";
import { currentCachedViewAnswer, encodeCachedView } from "../../../actors/view-cache.js";
import { renderView, VIEW_TYPES } from "../../../readmodels/views/index.js";
import { rawView } from "../../../src/mcp/tools/view-format.js";
import { LOG_TYPES } from "../../../src/catalog/log-types.js";
import { log } from "../readmodels/given.js";
import { SAMPLES } from "../readmodels/samples.js";

/** A patient every log type has touched, as the engine stores it. */
function patient() {
  const logs = LOG_TYPES.map((t, i) => log(t, `2025-03-01T${String(i % 24).padStart(2, "0")}:00:00Z`, SAMPLES[t]));
  return applyInOrder(emptyStored("pat_1", "UTC", "org_1", "prj_1"), [{ seq: 7, logs }], "now").stored;
}

describe("a cached view answered as stored (currentCachedViewAnswer)", () => {
  const s = patient();

  it("gives the raw view read's answer for every view type, without parsing the stored text", () => {
    for (const t of VIEW_TYPES) {
      const view = renderView(t, s.state);
      const answer = currentCachedViewAnswer(encodeCachedView(s, view), s, t, "pat_1");
      expect(answer).not.toBeNull();
      expect(JSON.parse(answer!)).toEqual(rawView("pat_1", view));
    }
  });

  it("answers nothing for a stale view, another reducer version, or text of another layout", () => {
    const view = renderView("symptom_snapshot", s.state);
    const later = applyInOrder(s, [{ seq: 9, logs: [log("symptom_report", "2025-03-02T00:00:00Z", { instrument: "esas_r", symptoms: [{ name: "pain", score: 9 }] })] }], "now").stored;
    expect(currentCachedViewAnswer(encodeCachedView(s, view), later, "symptom_snapshot", "pat_1")).toBeNull();
    expect(currentCachedViewAnswer(encodeCachedView({ ...s, fingerprint: "old" }, view), s, "symptom_snapshot", "pat_1")).toBeNull();
    expect(currentCachedViewAnswer(JSON.stringify({ view, applied_seq: 7, fingerprint: s.fingerprint }), s, "symptom_snapshot", "pat_1")).toBeNull();
    expect(currentCachedViewAnswer(encodeCachedView(s, view), s, "labs_snapshot", "pat_1")).toBeNull();
  });
});
