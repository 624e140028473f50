import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";

// No read-your-writes wait: a read of a state Redis lost comes before the engine rebuilt it.
let t: TestStack;
beforeAll(async () => {
  t = await startStack({ PSS_READ_WAIT_MS: "0" });
});
afterAll(async () => {
  await t?.close();
});

const inject = (method: "GET" | "POST", url: string, payload?: unknown) => t.app.inject({ method, url, headers: t.auth, payload: payload as object });

describe("a state read with no compiled state to answer", () => {
  it("is a 503 to retry for a patient with logs, never an empty patient, and the state once rebuilt", async () => {
    const pid = (await inject("POST", "/v1/patients", {})).json().id;
    const logs = [{ log_type: "symptom_report", patient_id: pid, timestamp: "2026-07-01T08:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 4 }] } }];
    expect((await inject("POST", "/v1/logs/batch", { logs })).json().accepted).toBe(1);
    for (const until = Date.now() + 5_000; Date.now() < until; await new Promise((r) => setTimeout(r, 20))) {
      if ((await inject("GET", `/v1/state/${pid}/event-modules/symptoms`)).json().payload?.symptoms?.length === 1) break;
    }
    const k = t.services.stateStore.keys(pid);
    await t.services.redis.del([k.state, k.events, k.views, `${t.config.namespace}:acc:{prj_default}`]);
    const lost = await inject("GET", `/v1/state/${pid}/event-modules/symptoms`);
    expect(lost.statusCode).toBe(503);
    expect(lost.headers["retry-after"]).toBe("1");
    expect(lost.json()).toMatchObject({ error: true, status_code: 503, error_type: "server_error", details: [{ type: "state_unavailable" }] });
    let back = lost;
    for (const until = Date.now() + 5_000; back.statusCode !== 200 && Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
      back = await inject("GET", `/v1/state/${pid}/event-modules/symptoms`);
    }
    expect(back.json().payload.symptoms[0]).toMatchObject({ name: "pain", current_score: 4 });
    // A patient without logs has an empty state to answer, at once.
    const fresh = (await inject("POST", "/v1/patients", {})).json().id;
    expect((await inject("GET", `/v1/state/${fresh}/stable`)).statusCode).toBe(200);
  });
});
