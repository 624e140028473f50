import { describe, expect, it } from "vitest";
import { applyInOrder, emptyStored, replayAll } from "../../../src/state/apply-logs.js";
import { currentCachedView, encodeCachedView } from "../../../src/state/view-cache.js";
import { renderView } from "../../../readmodels/views/index.js";
import { MODEL_FINGERPRINT, STATE_LAYOUT_VERSION } from "../../../infra/redis/state-store.js";
import type { LogRecord } from "../../../readmodels/log-record.js";

let n = 0;
const log = (log_type: string, timestamp: string, payload: Record<string, unknown>): LogRecord =>
  ({ id: `log_${String(++n).padStart(26, "0")}`, log_type, patient_id: "pat_1", timestamp, ingested_at: timestamp, payload }) as LogRecord;
const symptom = (ts: string, score: number) => log("symptom_report", ts, { instrument: "esas_r", symptoms: [{ name: "pain", score }] });
const login = (ts: string) => log("user_login", ts, {});

describe("cached views", () => {
  const s0 = emptyStored("pat_1", "UTC", "org_1", "prj_1");
  const s1 = applyInOrder(s0, [{ seq: 10, logs: [symptom("2026-01-01T00:00:00Z", 4)] }], "now").stored;
  const cached = encodeCachedView(s1, renderView("symptom_snapshot", s1.state));

  it("stay current while logs change only modules the view does not read", () => {
    const s2 = applyInOrder(s1, [{ seq: 11, logs: [login("2026-01-02T00:00:00Z")] }], "now").stored;
    expect(s2.applied_seq).toBe(11);
    expect(currentCachedView(cached, s2, "symptom_snapshot")).toEqual(renderView("symptom_snapshot", s2.state));
  });

  it("go stale when one of the view's inputs changes", () => {
    const s2 = applyInOrder(s1, [{ seq: 12, logs: [symptom("2026-01-03T00:00:00Z", 9)] }], "now").stored;
    expect(currentCachedView(cached, s2, "symptom_snapshot")).toBeNull();
  });

  it("go stale after a rebuild, which may have changed anything", () => {
    const rebuilt = replayAll(s0, [{ seq: 10, logs: [symptom("2026-01-01T00:00:00Z", 4)] }, { seq: 13, logs: [login("2026-01-02T00:00:00Z")] }], "now").stored;
    expect(currentCachedView(cached, rebuilt, "symptom_snapshot")).toBeNull();
  });

  it("are not trusted beside a state, or from a copy, saved under another Redis layout", () => {
    const otherLayout = { ...s1, fingerprint: s1.fingerprint.replace(`layout:${STATE_LAYOUT_VERSION}`, "layout:0") };
    expect(otherLayout.fingerprint).not.toBe(MODEL_FINGERPRINT);
    expect(currentCachedView(cached, otherLayout, "symptom_snapshot")).toBeNull();
    expect(currentCachedView(encodeCachedView(otherLayout, renderView("symptom_snapshot", s1.state)), s1, "symptom_snapshot")).toBeNull();
  });
});
