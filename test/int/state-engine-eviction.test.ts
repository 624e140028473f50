import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";

// Two patients in memory at most, and no idle passivation: only eviction makes room.
let t: TestStack;
beforeAll(async () => {
  t = await startStack({ PSS_MAX_ACTIVE_PATIENTS: "2", PSS_ACTOR_IDLE_MS: "600000", PSS_VIEW_DEBOUNCE_MS: "20" });
});
afterAll(async () => {
  await t?.close();
});

const inject = (method: "GET" | "POST", url: string, payload?: unknown) => t.app.inject({ method, url, headers: t.auth, payload: payload as object });
const symptom = (pid: string, day: number, score: number) => ({
  log_type: "symptom_report",
  patient_id: pid,
  timestamp: `2026-07-0${day}T09:00:00Z`,
  payload: { instrument: "esas_r", symptoms: [{ name: "pain", score }] },
});

describe("the state engine at its limit of patients in memory", () => {
  it("passivates the oldest to make room, and a passivated patient's next log continues from Redis", async () => {
    const pids: string[] = [];
    for (let i = 0; i < 6; i++) pids.push((await inject("POST", "/v1/patients", {})).json().id);
    for (const [i, pid] of pids.entries()) expect((await inject("POST", "/v1/logs/batch", { logs: [symptom(pid, 1, i)] })).json().accepted).toBe(1);
    // Each read waits for its patient's logs, so every patient has been loaded by now.
    for (const pid of pids) expect((await inject("GET", `/v1/state/${pid}/event-modules/symptoms`)).statusCode).toBe(200);
    for (const [i, pid] of pids.entries()) expect((await inject("POST", "/v1/logs/batch", { logs: [symptom(pid, 2, 10 - i)] })).json().accepted).toBe(1);
    for (const [i, pid] of pids.entries()) {
      const s = (await inject("GET", `/v1/state/${pid}/event-modules/symptoms`)).json();
      expect(s.payload.symptoms[0].history.map((h: { score: number }) => h.score)).toEqual([i, 10 - i]);
    }
    const engine = t.services.engine!;
    expect(engine.stats.passivated).toBeGreaterThanOrEqual(4);
    expect(engine.activeCount()).toBeLessThanOrEqual(3);
    expect(engine.stats.replays).toBe(0);
  });
});
