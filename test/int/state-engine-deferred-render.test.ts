import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";
import { currentCachedView } from "../../src/state/view-cache.js";
import { renderView, viewsAffectedBy } from "../../readmodels/views/index.js";

// Two patients in memory at most, and a view debounce no test waits out: views are
// rendered only for patients evicted with their views still pending.
let t: TestStack;
beforeAll(async () => {
  t = await startStack({ PSS_MAX_ACTIVE_PATIENTS: "2", PSS_ACTOR_IDLE_MS: "600000", PSS_VIEW_DEBOUNCE_MS: "60000" });
});
afterAll(async () => {
  await t?.close();
});

const inject = (method: "GET" | "POST", url: string, payload?: unknown) => t.app.inject({ method, url, headers: t.auth, payload: payload as object });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether Redis holds a current copy of the view (read straight from the store: an API read would render it). */
async function viewCurrent(pid: string, viewType: (typeof types)[number]): Promise<boolean> {
  const store = t.services.stateStore;
  const stored = await store.load(pid);
  return stored !== null && currentCachedView(await store.loadView(pid, viewType), stored, viewType, new Date().toISOString()) !== null;
}
const types = viewsAffectedBy(["symptoms"]);

describe("views of patients passivated before they were rendered", () => {
  it("are rendered from Redis once the engine has caught up, so reads find them current", async () => {
    expect(types.length).toBeGreaterThan(0);
    const pids: string[] = [];
    for (let i = 0; i < 6; i++) pids.push((await inject("POST", "/v1/patients", {})).json().id);
    for (const [i, pid] of pids.entries()) {
      const log = { log_type: "symptom_report", patient_id: pid, timestamp: "2026-07-01T09:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: i }] } };
      expect((await inject("POST", "/v1/logs/batch", { logs: [log] })).json().accepted).toBe(1);
      // A module read waits for the log to be applied and renders no view.
      expect((await inject("GET", `/v1/state/${pid}/event-modules/symptoms`)).statusCode).toBe(200);
    }

    const engine = t.services.engine!;
    for (let i = 0; i < 100 && engine.stats.passivated < 4; i++) await sleep(50);
    expect(engine.stats.passivated).toBe(4);
    const evicted = pids.filter((_, i) => i < 4);
    let current: boolean[] = [];
    for (let i = 0; i < 100; i++) {
      current = await Promise.all(evicted.flatMap((pid) => types.map((v) => viewCurrent(pid, v))));
      if (current.every(Boolean)) break;
      await sleep(50);
    }
    expect(current.every(Boolean)).toBe(true);
    // Rendered from the modules those views read, loaded alone: the same as from the whole state.
    for (const pid of evicted) {
      const stored = (await t.services.stateStore.load(pid))!;
      const now = new Date().toISOString();
      for (const v of types) expect(currentCachedView(await t.services.stateStore.loadView(pid, v), stored, v, now)).toEqual(renderView(v, stored.state, now));
    }
    // The two still in memory wait out their debounce: nothing rendered them.
    for (const pid of pids.slice(4)) expect(await viewCurrent(pid, types[0]!)).toBe(false);
    expect(engine.activeCount()).toBe(2);
  });
});
