import { describe, expect, it } from "vitest";
import { emptyStored } from "../../src/state/apply-logs.js";
import type { StoredPatientState } from "../../infra/redis/state-store.js";
import type { PatientState } from "../../readmodels/patient-state.js";
import { auditRows as rows, storeInRedis } from "../support/redis-store.js";

// The fences of PatientStateStore.save, run by Redis itself: what two members briefly
// working one partition rely on (see SAVE_CHANGED and SAVE_ALL).
const db = storeInRedis("fence");

/** A state at `seq` whose symptoms module says `score` (and a demographics module, left alone by incremental saves). */
function stateAt(pid: string, seq: number, events: number, score: number, name = "Ada"): StoredPatientState {
  const base = emptyStored(pid, "UTC", "org", "prj");
  const entry = (module_type: string, payload: unknown) => ({ module_type, payload, created_at: "2026-05-01T00:00:00.000Z", updated_at: "2026-05-01T00:00:00.000Z", clocks: {} });
  const state = {
    ...base.state,
    stable: { demographics: entry("demographics", { name }) },
    event: { symptoms: entry("symptoms", { score }) },
    applied: events,
  } as unknown as PatientState;
  return { ...base, state, applied_seq: seq, events_total: events, last: { timestamp: "2026-05-01T00:00:00.000Z", id: `log_${events}` } };
}

/** Everything Redis holds for the patient: the state hash, the audit members and the views. */
async function raw(pid: string) {
  const k = db.store.keys(pid);
  return { state: await db.redis.hGetAll(k.state), events: await db.redis.zRangeWithScores(k.events, 0, -1), views: await db.redis.hGetAll(k.views) };
}

describe("fenced saves of a patient's state", () => {
  it("refuses an incremental save over another base, and writes nothing of it", async () => {
    const pid = "pat_wrong_base";
    expect(await db.store.save(stateAt(pid, 10, 3, 1), rows(1, 3))).toBe(true);
    await db.store.saveViews(pid, { symptom_snapshot: "{}" });
    const before = await raw(pid);
    // Folded from a state at 7 (a member's stale copy), and from one at 12 (ahead of Redis).
    for (const base of [7, 12, 0]) {
      expect(await db.store.save(stateAt(pid, 15, 5, 9, "Other"), rows(4, 5), ["symptoms", "demographics"], base)).toBe(false);
      expect(await raw(pid)).toEqual(before);
    }
    expect((await db.store.load(pid))?.applied_seq).toBe(10);
    // Over the right base it goes through, the untouched module kept.
    expect(await db.store.save(stateAt(pid, 15, 5, 9, "Other"), rows(4, 5), ["symptoms"], 10)).toBe(true);
    const after = await db.store.load(pid);
    expect(after?.applied_seq).toBe(15);
    expect((after?.state.event.symptoms?.payload as unknown as { score: number }).score).toBe(9);
    expect((after?.state.stable.demographics?.payload as unknown as { name: string }).name).toBe("Ada");
    expect((await db.store.events(pid, 0, 100)).map((r) => r.score)).toEqual([1, 2, 3, 4, 5]);
  });

  it("refuses a whole save folded less far than the stored state, and replaces it from an equal or higher one", async () => {
    const pid = "pat_whole";
    expect(await db.store.save(stateAt(pid, 20, 4, 2), rows(1, 4))).toBe(true);
    await db.store.saveViews(pid, { symptom_snapshot: "{}" });
    const before = await raw(pid);
    expect(await db.store.save(stateAt(pid, 19, 9, 7), rows(1, 9))).toBe(false);
    expect(await raw(pid)).toEqual(before);
    // Equal: two rebuilds that read the same history; the later one replaces (views go too).
    expect(await db.store.save(stateAt(pid, 20, 2, 5), rows(1, 2))).toBe(true);
    let s = await db.store.load(pid);
    expect([s?.applied_seq, s?.events_total, (s?.state.event.symptoms?.payload as unknown as { score: number }).score]).toEqual([20, 2, 5]);
    expect((await db.store.events(pid, 0, 100)).map((r) => r.score)).toEqual([1, 2]);
    expect(await db.store.loadView(pid, "symptom_snapshot")).toBeNull();
    expect(await db.store.save(stateAt(pid, 30, 3, 6), rows(1, 3))).toBe(true);
    s = await db.store.load(pid);
    expect([s?.applied_seq, s?.events_total]).toEqual([30, 3]);
    expect((await db.store.events(pid, 0, 100)).map((r) => r.score)).toEqual([1, 2, 3]);
  });

  it("refuses an incremental save once Redis lost the patient, and takes a whole one", async () => {
    const pid = "pat_lost";
    expect(await db.store.save(stateAt(pid, 5, 2, 1), rows(1, 2))).toBe(true);
    const k = db.store.keys(pid);
    await db.redis.del([k.state, k.events, k.views]);
    expect(await db.store.save(stateAt(pid, 8, 3, 4), rows(3, 3), ["symptoms"], 5)).toBe(false);
    expect(await raw(pid)).toEqual({ state: {}, events: [], views: {} });
    expect(await db.store.save(stateAt(pid, 8, 3, 4), rows(1, 3))).toBe(true);
    expect((await db.store.load(pid))?.applied_seq).toBe(8);
    expect((await db.store.events(pid, 0, 100)).map((r) => r.score)).toEqual([1, 2, 3]);
  });

  it("refuses an incremental save that continues an audit Redis lost, and writes nothing of it", async () => {
    const pid = "pat_lost_audit";
    expect(await db.store.save(stateAt(pid, 5, 2, 1), rows(1, 2))).toBe(true);
    await db.redis.del(db.store.keys(pid).events);
    const before = await raw(pid);
    expect(await db.store.save(stateAt(pid, 8, 3, 4), rows(3, 3), ["symptoms"], 5)).toBe(false);
    expect(await raw(pid)).toEqual(before);
  });
});
