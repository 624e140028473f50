import { describe, expect, it } from "vitest";
import { applyInOrder, emptyStored, replayAll } from "../../../src/state/apply-logs.js";
import { currentCachedView, encodeCachedView } from "../../../src/state/view-cache.js";
import { renderView, VIEWS_VERSION } from "../../../readmodels/views/index.js";
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
  const READ = "2026-01-05T10:00:00.000Z";
  const cached = encodeCachedView(s1, renderView("symptom_snapshot", s1.state, READ));

  it("stay current while logs change only modules the view does not read", () => {
    const s2 = applyInOrder(s1, [{ seq: 11, logs: [login("2026-01-02T00:00:00Z")] }], "now").stored;
    expect(s2.applied_seq).toBe(11);
    expect(currentCachedView(cached, s2, "symptom_snapshot", "2026-01-05T23:59:00Z")).toEqual(renderView("symptom_snapshot", s2.state, READ));
  });

  it("go stale when one of the view's inputs changes", () => {
    const s2 = applyInOrder(s1, [{ seq: 12, logs: [symptom("2026-01-03T00:00:00Z", 9)] }], "now").stored;
    expect(currentCachedView(cached, s2, "symptom_snapshot", READ)).toBeNull();
  });

  it("go stale when the renderers changed (another VIEWS_VERSION), though the state did not", () => {
    const older = JSON.stringify({ ...JSON.parse(cached), views_version: VIEWS_VERSION - 1 });
    expect(currentCachedView(older, s1, "symptom_snapshot", READ)).toBeNull();
    const { views_version: _, ...unversioned } = JSON.parse(cached);
    expect(currentCachedView(JSON.stringify(unversioned), s1, "symptom_snapshot", READ)).toBeNull();
    expect(currentCachedView(cached, s1, "symptom_snapshot", READ)).not.toBeNull();
  });

  it("go stale after a rebuild, which may have changed anything", () => {
    const rebuilt = replayAll(s0, [{ seq: 10, logs: [symptom("2026-01-01T00:00:00Z", 4)] }, { seq: 13, logs: [login("2026-01-02T00:00:00Z")] }], "now").stored;
    expect(currentCachedView(cached, rebuilt, "symptom_snapshot", READ)).toBeNull();
  });

  it("are not trusted beside a state, or from a copy, saved under another Redis layout", () => {
    const otherLayout = { ...s1, fingerprint: s1.fingerprint.replace(`layout:${STATE_LAYOUT_VERSION}`, "layout:0") };
    expect(otherLayout.fingerprint).not.toBe(MODEL_FINGERPRINT);
    expect(currentCachedView(cached, otherLayout, "symptom_snapshot", READ)).toBeNull();
    expect(currentCachedView(encodeCachedView(otherLayout, renderView("symptom_snapshot", s1.state, READ)), s1, "symptom_snapshot", READ)).toBeNull();
  });

  it("go stale on the next day in the patient's zone: the week counts back from the day of the read", () => {
    expect(currentCachedView(cached, s1, "symptom_snapshot", "2026-01-05T00:00:00Z")).not.toBeNull();
    expect(currentCachedView(cached, s1, "symptom_snapshot", "2026-01-06T00:00:00Z")).toBeNull();
    const paris = { ...s1, state: { ...s1.state, timezone: "Europe/Paris" } };
    // 23:30 UTC on the 5th is already the 6th in Paris.
    expect(currentCachedView(cached, paris, "symptom_snapshot", "2026-01-05T23:30:00Z")).toBeNull();
  });
});

describe("a cached medication view", () => {
  it("goes stale when a scheduled dose's window closes, though no log arrived", () => {
    const s0 = emptyStored("pat_1", "UTC", "org_1", "prj_1");
    const list = log("medication_list_update", "2026-01-01T07:00:00Z", { medications: [{ action: "add", medication_name: "Metformin", schedule_times: ["08:00", "20:00"] }] });
    const dose = log("medication_adherence", "2026-01-01T08:05:00Z", { medication_adherence: [{ status: "taken", medication_name: "Metformin", scheduled_time: "2026-01-01T08:00:00Z" }] });
    const s1 = applyInOrder(s0, [{ seq: 1, logs: [list] }, { seq: 2, logs: [dose] }], "now").stored;
    const read = "2026-01-03T10:00:00.000Z";
    const view = renderView("medication_snapshot", s1.state, read);
    // The 20:00 dose's hour-long window closes at 21:00.
    expect(view.expires_at).toBe("2026-01-03T21:00:00.000Z");
    const cached = encodeCachedView(s1, view);
    expect(currentCachedView(cached, s1, "medication_snapshot", "2026-01-03T20:59:00.000Z")).not.toBeNull();
    expect(currentCachedView(cached, s1, "medication_snapshot", "2026-01-03T21:00:00.000Z")).toBeNull();
    const later = renderView("medication_snapshot", s1.state, "2026-01-03T21:00:00.000Z");
    expect(later.blocks.find((b) => b.id === "adherence_week")!.text).not.toBe(view.blocks.find((b) => b.id === "adherence_week")!.text);
  });
});
