import { describe, expect, it } from "vitest";
import { emptyStored } from "../../src/state/apply-logs.js";
import { EVENTS_KEPT, ROWS_PER_MEMBER, type StoredPatientState } from "../../infra/redis/state-store.js";
import { auditRows as rows, storeInRedis } from "../support/redis-store.js";

// The audit as stored in real Redis: a save's rows go in grouped members, and reads page
// through them row by row whatever the grouping.
const db = storeInRedis("audit");

/**
 * Saves `count` more rows on top of `s` (the first save of a patient writes its whole
 * state; later ones are fenced on the sequence `s` was saved at, as the engine's are).
 */
async function saveRows(s: StoredPatientState, count: number): Promise<StoredPatientState> {
  const next = { ...s, applied_seq: s.applied_seq + 1, events_total: s.events_total + count };
  expect(await db.store.save(next, rows(s.events_total + 1, next.events_total), s.applied_seq === 0 ? undefined : [], s.applied_seq)).toBe(true);
  return next;
}

/** Every row, read in pages of `limit` by following the cursor as the routes do. */
async function readAll(pid: string, limit: number): Promise<number[]> {
  const seen: number[] = [];
  for (let after = 0; ; ) {
    const page = await db.store.events(pid, after, limit + 1);
    for (const r of page.slice(0, limit)) {
      expect(r.event.id).toBe(`evt_${r.score}`);
      seen.push(r.score);
      after = r.score;
    }
    if (page.length <= limit) return seen;
  }
}

describe("the event audit in Redis", () => {
  it("stores a save's rows as members of at most ROWS_PER_MEMBER, scored by their last row", async () => {
    let s = emptyStored("pat_a", "UTC", "org", "prj");
    s = await saveRows(s, 250);
    await saveRows(s, 3);
    const members = await db.redis.zRangeWithScores(db.store.keys("pat_a").events, 0, -1);
    expect(members.map((m) => [m.score, (JSON.parse(m.value) as unknown[]).length])).toEqual([[100, ROWS_PER_MEMBER], [200, 100], [250, 50], [253, 3]]);
  });

  it("pages row by row across members, from any cursor", async () => {
    let s = emptyStored("pat_b", "UTC", "org", "prj");
    for (const n of [1, 7, 120, 2, 40]) s = await saveRows(s, n);
    const all = Array.from({ length: 170 }, (_, i) => i + 1);
    for (const limit of [1, 3, 50, 99, 500]) expect(await readAll("pat_b", limit)).toEqual(all);
    for (const after of [0, 5, 8, 100, 127, 128, 169, 170]) {
      expect((await db.store.events("pat_b", after, 10)).map((r) => r.score)).toEqual(all.filter((n) => n > after).slice(0, 10));
    }
  });

  it("replaces the state, its audit and its views on a full save (a rebuild), in one step", async () => {
    let s = emptyStored("pat_e", "UTC", "org", "prj");
    s = await saveRows(s, 30);
    await db.store.saveViews("pat_e", { symptom_snapshot: "{}" });
    const rebuilt = { ...s, applied_seq: 9, events_total: 5 };
    expect(await db.store.save(rebuilt, rows(1, 5))).toBe(true);
    expect(await readAll("pat_e", 50)).toEqual([1, 2, 3, 4, 5]);
    expect(await db.store.loadView("pat_e", "symptom_snapshot")).toBeNull();
    expect((await db.store.load("pat_e"))?.applied_seq).toBe(9);
  });

  it("keeps the last EVENTS_KEPT rows (whole members) as the audit grows", async () => {
    let s = emptyStored("pat_d", "UTC", "org", "prj");
    for (let i = 0; i < 13; i++) s = await saveRows(s, 100);
    const kept = await readAll("pat_d", 500);
    expect(kept[0]).toBe(1300 - EVENTS_KEPT + 1);
    expect(kept.at(-1)).toBe(1300);
    expect(kept).toHaveLength(EVENTS_KEPT);
  });
});
