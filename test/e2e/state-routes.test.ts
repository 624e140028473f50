import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
let pid: string;
let logIds: string[];
beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "10" });
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
  const logs = [
    { log_type: "symptom_report", patient_id: pid, timestamp: "2026-07-01T08:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 8 }] }, trace: "visit-1" },
    { log_type: "symptom_report", patient_id: pid, timestamp: "2026-07-03T08:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 4 }] } },
    { log_type: "medication_list_update", patient_id: pid, timestamp: "2026-07-01T09:00:00Z", payload: { medications: [{ action: "add", medication_name: "Metformin", rxnorm_cui: "860975", dose: "500 mg", frequency: "BID", schedule_times: ["08:00", "20:00"] }] } },
    { log_type: "lab_results", patient_id: pid, timestamp: "2026-07-02T07:00:00Z", payload: { results: [{ loinc_code: "2345-7", test_name: "Glucose", value_numeric: 210, unit: "mg/dL", abnormal_flag: "H" }] } },
    { log_type: "user_login", patient_id: pid, timestamp: "2026-07-02T10:00:00Z", payload: {} },
  ];
  const r = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } })).json();
  logIds = r.results.map((x: any) => x.id);
});
afterAll(async () => {
  await t?.close();
});

const get = (url: string, headers: Record<string, string> = t.auth) => t.app.inject({ method: "GET", url, headers });

describe("state reads over REST", () => {
  it("answers stable modules with the contract's entry shape, filtered by ?modules", async () => {
    const r = (await get(`/v1/state/${pid}/stable?modules=medications`)).json();
    expect(Object.keys(r.modules)).toEqual(["medications"]);
    expect(r.modules.medications).toMatchObject({ module_type: "medications", created_at: "2026-07-01T09:00:00.000Z", updated_at: "2026-07-01T09:00:00.000Z" });
    expect(r.modules.medications.payload.medications[0]).toMatchObject({ medication_name: "Metformin", rxnorm_cui: "860975", schedule_times: ["08:00", "20:00"], adherence_window_minutes: 60 });
    // The key repeated, as /logs takes log_types: the same answer as the comma form.
    const repeated = await get(`/v1/state/${pid}/stable?modules=medications&modules=demographics`);
    expect(repeated.statusCode).toBe(200);
    expect(Object.keys(repeated.json().modules).sort()).toEqual(Object.keys((await get(`/v1/state/${pid}/stable?modules=medications,demographics`)).json().modules).sort());
  });

  it("lists event modules with data and answers one by type", async () => {
    const list = (await get(`/v1/state/${pid}/event-modules`)).json();
    expect(list.modules.map((m: any) => m.module_type)).toEqual(expect.arrayContaining(["symptoms", "lab_results", "engagement"]));
    const labs = (await get(`/v1/state/${pid}/event-modules/lab_results`)).json();
    expect(labs.payload.results[0]).toMatchObject({ loinc_code: "2345-7", latest: { value_numeric: 210, abnormal_flag: "H" } });
  });

  it("answers module reads as JSON with exactly the entry fields, the stored clocks left out", async () => {
    for (const url of [`/v1/state/${pid}/stable`, `/v1/state/${pid}/event-modules/lab_results`]) {
      const r = await get(url);
      expect(r.headers["content-type"]).toBe("application/json; charset=utf-8");
      expect(r.body).not.toContain('"clocks"');
    }
    const stable = (await get(`/v1/state/${pid}/stable`)).json();
    for (const m of Object.values<Record<string, unknown>>(stable.modules)) expect(Object.keys(m)).toEqual(["module_type", "payload", "created_at", "updated_at"]);
    expect(Object.keys((await get(`/v1/state/${pid}/event-modules/lab_results`)).json())).toEqual(["patient_id", "module_type", "payload", "created_at", "updated_at"]);
  });

  it("answers 404 naming the known modules for an unknown module, and an empty payload for a known one without data", async () => {
    const r = await get(`/v1/state/${pid}/event-modules/moonphase`);
    expect(r.statusCode).toBe(404);
    expect(r.json().message).toContain("symptoms");
    expect((await get(`/v1/state/${pid}/stable?modules=nope`)).statusCode).toBe(404);
    const sleep = (await get(`/v1/state/${pid}/event-modules/sleep`)).json();
    expect(sleep).toMatchObject({ module_type: "sleep", created_at: null, updated_at: null });
  });

  it("answers 404 for a patient of another project or an unknown one", async () => {
    expect((await get(`/v1/state/pat_00000000000000000000000000/stable`)).statusCode).toBe(404);
  });

  it("serves views as raw blocks whose refs name the logs behind them, and as markdown", async () => {
    const list = (await get(`/v1/state/${pid}/views`)).json();
    expect(list.views.find((v: any) => v.view_type === "symptom_snapshot")).toMatchObject({ has_blocks: true });
    const raw = (await get(`/v1/state/${pid}/views/symptom_snapshot?format=raw`)).json();
    expect(raw).toMatchObject({ patient_id: pid, view_type: "symptom_snapshot", view_id: expect.stringMatching(/^symptom_snapshot:/) });
    const refs = raw.content.blocks.flatMap((b: any) => b.refs);
    expect(refs).toEqual(expect.arrayContaining([logIds[0], logIds[1]]));
    const md = await get(`/v1/state/${pid}/views/symptom_snapshot?format=markdown`);
    expect(md.headers["content-type"]).toMatch(/^text\/markdown/);
    expect(md.body).toContain("pain");
    const blocks = (await get(`/v1/state/${pid}/views/symptom_snapshot/blocks`)).json();
    const first = blocks.blocks[0];
    expect(first).toMatchObject({ block_id: "active_symptoms", has_result: true });
    const block = (await get(`/v1/state/${pid}/views/symptom_snapshot/blocks/${first.block_id}`)).json();
    expect(block).toMatchObject({ block_id: first.block_id, refs: expect.any(Array), content: expect.any(String), has_result: true });
    // Every block of the template is listed; one with nothing to say answers empty, not 404.
    const resolved = blocks.blocks.find((b: any) => b.block_id === "resolved_symptoms");
    expect(resolved).toEqual({ block_id: "resolved_symptoms", block_name: "Resolved symptoms", segment: "long_term", has_result: false });
    const empty = await get(`/v1/state/${pid}/views/symptom_snapshot/blocks/resolved_symptoms`);
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toMatchObject({ content: "", refs: [], data: null, has_result: false });
    const unknown = await get(`/v1/state/${pid}/views/symptom_snapshot/blocks/horoscope`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().message).toContain("active_symptoms");
    const recent = (await get(`/v1/state/${pid}/views/symptom_snapshot/recent?limit=1`)).json();
    expect(recent).toMatchObject({ count: 1, total_count: 2 });
    expect((await get(`/v1/state/${pid}/views/horoscope`)).statusCode).toBe(404);
  });

  it("pages logs newest first with a cursor and filters by type and trace", async () => {
    const p1 = (await get(`/v1/state/${pid}/logs?limit=2`)).json();
    expect(p1.logs.map((l: any) => l.timestamp)).toEqual(["2026-07-03T08:00:00.000Z", "2026-07-02T10:00:00.000Z"]);
    const p2 = (await get(`/v1/state/${pid}/logs?limit=2&cursor=${p1.next_cursor}`)).json();
    expect(p2.logs.map((l: any) => l.timestamp)).toEqual(["2026-07-02T07:00:00.000Z", "2026-07-01T09:00:00.000Z"]);
    const p3 = (await get(`/v1/state/${pid}/logs?limit=2&cursor=${p2.next_cursor}`)).json();
    expect(p3).toMatchObject({ count: 1, next_cursor: null });
    const byType = (await get(`/v1/state/${pid}/logs?log_types=lab_results,user_login`)).json();
    expect(byType.logs.map((l: any) => l.type).sort()).toEqual(["lab_results", "user_login"]);
    const byTrace = (await get(`/v1/state/${pid}/logs?trace=visit-1`)).json();
    expect(byTrace.logs.map((l: any) => l.id)).toEqual([logIds[0]]);
    const since = (await get(`/v1/state/${pid}/logs?since=2026-07-02T08:00:00Z&until=2026-07-02T23:00:00Z`)).json();
    expect(since.logs.map((l: any) => l.type)).toEqual(["user_login"]);
    expect((await get(`/v1/state/${pid}/logs?cursor=garbage`)).statusCode).toBe(422);
    const swapped = await get(`/v1/state/${pid}/logs?since=2026-07-03&until=2026-07-01`);
    expect(swapped.statusCode).toBe(422);
    expect(swapped.json().details[0]).toMatchObject({ location: ["query", "since"], message: expect.stringContaining("swap them") });
  });

  it("pages a history many times the page size, stored out of time order, each log once and in order both ways", async () => {
    const other = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
    // Stored in a shuffled time order: a page keeps only its rows and the next, so this
    // crosses that bound many times over (limit 2 keeps 3; 37 logs).
    const hours = Array.from({ length: 37 }, (_, i) => (i * 17) % 37);
    const logs = hours.map((h) => ({ log_type: "user_login", patient_id: other, timestamp: `2026-08-01T${String(h % 24).padStart(2, "0")}:00:00Z`.replace("2026-08-01", h < 24 ? "2026-08-01" : "2026-08-02"), payload: {} }));
    expect((await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } })).json().accepted).toBe(37);
    const sorted = logs.map((l) => new Date(l.timestamp).toISOString()).sort();
    for (const order of ["asc", "desc"] as const) {
      const seen: string[] = [];
      const ids = new Set<string>();
      let cursor: string | null = null;
      do {
        const page: any = (await get(`/v1/state/${other}/logs?limit=2&order=${order}${cursor ? `&cursor=${cursor}` : ""}`)).json();
        for (const l of page.logs) {
          seen.push(l.timestamp);
          ids.add(l.id);
        }
        cursor = page.next_cursor;
      } while (cursor);
      expect(seen).toEqual(order === "asc" ? sorted : [...sorted].reverse());
      expect(ids.size).toBe(37);
    }
  });

  it("takes log_types repeated or comma-separated, refuses an unknown one, and reads a bare date as UTC midnight", async () => {
    const repeated = (await get(`/v1/state/${pid}/logs?log_types=lab_results&log_types=user_login`)).json();
    expect(repeated.logs.map((l: any) => l.type).sort()).toEqual(["lab_results", "user_login"]);
    const typo = await get(`/v1/state/${pid}/logs?log_types=lab_results,lab_resluts`);
    expect(typo.statusCode).toBe(422);
    expect(typo.json().details[0]).toMatchObject({ location: ["query", "log_types"], message: expect.stringContaining("lab_resluts") });
    const days = (await get(`/v1/state/${pid}/logs?since=2026-07-02&until=2026-07-02T23:59:59Z`)).json();
    expect(days.logs.map((l: any) => l.type).sort()).toEqual(["lab_results", "user_login"]);
    const bad = await get(`/v1/state/${pid}/events?since=yesterday`);
    expect(bad.statusCode).toBe(422);
    expect(bad.json().details[0]).toMatchObject({ location: ["query", "since"], input_value: "yesterday" });
    expect((await get(`/v1/state/${pid}/events?since=2026-01-01`)).statusCode).toBe(200);
  });

  it("reads the logs and events a view's sources name (log_ids), with the other filters, at most 100", async () => {
    const [pain, , , lab] = logIds;
    const named = (await get(`/v1/state/${pid}/logs?log_ids=${pain},${lab}`)).json();
    expect(named.logs.map((l: any) => l.id).sort()).toEqual([pain, lab].sort());
    const repeated = (await get(`/v1/state/${pid}/logs?log_ids=${pain}&log_ids=${lab}&log_types=lab_results`)).json();
    expect(repeated.logs.map((l: any) => l.id)).toEqual([lab]);
    expect((await get(`/v1/state/${pid}/logs?log_ids=log_unknown`)).json().logs).toEqual([]);
    const events = (await get(`/v1/state/${pid}/events?log_ids=${pain}`)).json();
    expect(events.events.map((e: any) => e.source_event_log_id)).toEqual([pain]);
    const traced = (await get(`/v1/state/${pid}/events?log_ids=${lab}&trace_id=visit-1`)).json();
    expect(traced.events).toEqual([]);
    const many = await get(`/v1/state/${pid}/logs?log_ids=${Array.from({ length: 101 }, (_, i) => `log_${i}`).join(",")}`);
    expect(many.statusCode).toBe(422);
    expect(many.json().details[0]).toMatchObject({ location: ["query", "log_ids"], message: expect.stringContaining("at most 100") });
  });

  it("counts the distinct log_ids, and refuses past 100 with one message whether comma-separated or repeated", async () => {
    const [pain] = logIds;
    const ids = Array.from({ length: 101 }, (_, i) => `log_${i}`);
    for (const route of ["logs", "events"]) {
      const comma = await get(`/v1/state/${pid}/${route}?log_ids=${ids.join(",")}`);
      const repeated = await get(`/v1/state/${pid}/${route}?${ids.map((id) => `log_ids=${id}`).join("&")}`);
      for (const r of [comma, repeated]) {
        expect(r.statusCode).toBe(422);
        expect(r.json().message).toMatch(/^log_ids names 101 logs; name at most 100 per read/);
        expect(r.json().details).toEqual([expect.objectContaining({ location: ["query", "log_ids"] })]);
      }
    }
    // One id named 101 times names one log, as 3 times does.
    for (const query of [Array(101).fill(`log_ids=${pain}`).join("&"), `log_ids=${Array(101).fill(pain).join(",")}`]) {
      const r = await get(`/v1/state/${pid}/logs?${query}`);
      expect(r.statusCode).toBe(200);
      expect(r.json().logs.map((l: any) => l.id)).toEqual([pain]);
    }
  });

  it("answers a bodiless log query as the empty query", async () => {
    const r = await t.app.inject({ method: "POST", url: `/v1/state/${pid}/logs/query`, headers: t.auth });
    expect(r.statusCode).toBe(200);
    expect(r.json().rows.length).toBe(5);
  });

  it("audits what each log changed, paged with a cursor", async () => {
    const e1 = (await get(`/v1/state/${pid}/events?limit=3`)).json();
    expect(e1.count).toBe(3);
    expect(e1.events[0]).toMatchObject({ trigger: "log", status: "applied", source_event_log_id: expect.stringMatching(/^log_/) });
    expect(e1.events.flatMap((e: any) => e.changes.map((c: any) => c.module_type))).toContain("symptoms");
    const e2 = (await get(`/v1/state/${pid}/events?limit=3&cursor=${e1.next_cursor}`)).json();
    expect(e2).toMatchObject({ count: 2, next_cursor: null });
  });

  it("pages the audit without repeating or skipping a row when a late log renumbers it between pages", async () => {
    const own = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
    const send = (day: number) =>
      t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: [
        { log_type: "symptom_report", patient_id: own, timestamp: `2026-05-${String(day).padStart(2, "0")}T10:00:00Z`, payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: day % 10 }] } },
      ] } }).then((r) => r.json().results[0].id as string);
    const ids: string[] = [];
    for (const day of [10, 11, 12, 13, 14, 15]) ids.push(await send(day));
    const first = (await get(`/v1/state/${own}/events?limit=3`)).json();
    expect(first.events.map((e: any) => e.source_event_log_id)).toEqual(ids.slice(0, 3));
    const late = await send(1);
    const rest = (await get(`/v1/state/${own}/events?limit=10&cursor=${first.next_cursor}`)).json();
    // The late log sorts first (fold order); the walk goes on right after the rows already read.
    expect(rest.events.map((e: any) => e.source_event_log_id)).toEqual(ids.slice(3));
    expect((await get(`/v1/state/${own}/events?limit=1`)).json().events[0].source_event_log_id).toBe(late);
    // Row numbers as cursors (what earlier builds gave out) still page.
    expect((await get(`/v1/state/${own}/events?limit=2&cursor=5`)).json().events).toHaveLength(2);
    expect((await get(`/v1/state/${own}/events?cursor=not*a*cursor`)).statusCode).toBe(422);
    // A leap second is refused, as in a log's timestamp (test/e2e/leap-seconds.test.ts).
    expect((await get(`/v1/state/${own}/events?since=2026-06-30T23:59:60Z`)).statusCode).toBe(422);
    expect((await get(`/v1/state/${own}/events?cursor=bm9wZQ`)).statusCode).toBe(422);
  });

  it("needs sdk:state-read", async () => {
    const { generateSecret } = await import("../../src/control/api-keys.js");
    const secret = generateSecret();
    await t.services.apiKeys.create({ organization_id: "org_default", project_id: null, name: "writer", scopes: ["sdk:event-log"] }, secret);
    expect((await get(`/v1/state/${pid}/stable`, { authorization: `Bearer ${secret}` })).statusCode).toBe(403);
  });
});
