import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { PatientStateClient } from "../../client/index.js";
import { baseUrl, callTool, connectMcp } from "../support/mcp-client.js";
import { startStack, type TestStack } from "../support/stack.js";

/**
 * get_view_recent_events and GET .../views/{vt}/recent with `since` and a cursor, over four
 * weeks of daily check-ins: each morning one ESAS-r report of three symptoms (three entries
 * of one log: same time, same log id) and a mood report at the same minute (another log id).
 */
let t: TestStack;
let mcp: Client;
let pid: string;
let symptomIds: string[];
let moodIds: string[];

const DAYS = 28;
const DAY_MS = 24 * 3600 * 1000;
// Mornings ending yesterday, so every entry is in the past whenever the test runs.
const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
const morning = (i: number) => new Date(today - (DAYS - i) * DAY_MS + 9 * 3600 * 1000).toISOString();

interface Item { timestamp: string; module_type: string; kind: string; summary: string; log_id: string }
type Page = { items: Item[]; next_cursor: string | null; total_count: number };

const rest = async (query: string) => t.app.inject({ method: "GET", url: `/v1/state/${pid}/views/symptom_snapshot/recent?${query}`, headers: t.auth });
const restPage = async (query: string): Promise<Page> => {
  const r = await rest(query);
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
};
const mcpPage = async (args: Record<string, unknown>): Promise<Page> => {
  const r = await callTool(mcp, "get_view_recent_events", { patient_id: pid, view_type: "symptom_snapshot", ...args });
  expect(r.isError, r.text).toBe(false);
  return { ...r.json, items: r.json.entries };
};

/** Every page from the first, following next_cursor; the pages as fetched. */
async function walk(fetch: (cursor: string | undefined) => Promise<Page>): Promise<Page[]> {
  const pages: Page[] = [];
  let cursor: string | undefined;
  do {
    const p = await fetch(cursor);
    pages.push(p);
    cursor = p.next_cursor ?? undefined;
    expect(pages.length).toBeLessThan(200);
  } while (cursor !== undefined);
  return pages;
}

const key = (e: Item) => `${e.log_id}|${e.summary}`;

async function post(logs: object[]): Promise<string[]> {
  const r = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } })).json();
  expect(r.accepted, JSON.stringify(r.errors).slice(0, 500)).toBe(logs.length);
  return r.results.map((x: { id: string }) => x.id);
}

const checkIn = (patient: string, i: number, at = morning(i)) => [
  {
    log_type: "symptom_report", patient_id: patient, timestamp: at,
    payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 2 + (i % 4) }, { name: "tiredness", score: 3 + (i % 3) }, { name: "nausea", score: i % 2 }] },
  },
  { log_type: "mood_report", patient_id: patient, timestamp: at, payload: { moods: [{ mood: i % 5 === 0 ? "anxious" : "calm", intensity: 1 + (i % 6) }] } },
];

beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "10" });
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
  const ids = await post(Array.from({ length: DAYS }, (_, i) => checkIn(pid, i)).flat());
  symptomIds = ids.filter((_, k) => k % 2 === 0);
  moodIds = ids.filter((_, k) => k % 2 === 1);
  mcp = await connectMcp(baseUrl(t.app), t.adminKey);
});
afterAll(async () => {
  await mcp?.close();
  await t?.close();
});

/** What paging must give: every entry once, newest first by time then log id. */
function expectWholeHistory(items: Item[]) {
  expect(items).toHaveLength(DAYS * 4);
  expect(new Set(items.map(key)).size).toBe(items.length);
  for (const id of symptomIds) expect(items.filter((e) => e.log_id === id)).toHaveLength(3);
  for (const id of moodIds) expect(items.filter((e) => e.log_id === id)).toHaveLength(1);
  for (let k = 1; k < items.length; k++) {
    const [a, b] = [items[k - 1]!, items[k]!];
    expect(a.timestamp > b.timestamp || (a.timestamp === b.timestamp && a.log_id >= b.log_id), `${k}: ${key(a)} before ${key(b)}`).toBe(true);
  }
}

describe("get_view_recent_events: since and cursor", () => {
  it("pages through every entry exactly once, newest first, with page boundaries inside one minute and inside one log", async () => {
    const whole = (await restPage("limit=200")).items;
    expectWholeHistory(whole);
    // 7 a page: boundaries fall between the four entries of one minute, and between the three of one log.
    const pages = await walk((cursor) => mcpPage({ limit: 7, ...(cursor ? { cursor } : {}) }));
    expect(pages).toHaveLength(Math.ceil((DAYS * 4) / 7));
    expect(pages.every((p) => p.total_count === DAYS * 4)).toBe(true);
    expect(pages.at(-1)!.next_cursor).toBeNull();
    expect(pages.flatMap((p) => p.items)).toEqual(whole);
    const split = pages.findIndex((p, k) => k > 0 && pages[k - 1]!.items.at(-1)!.log_id === p.items[0]!.log_id);
    expect(split, "some page boundary splits the entries of one log").toBeGreaterThan(0);
    const sameTime = pages.findIndex((p, k) => k > 0 && pages[k - 1]!.items.at(-1)!.timestamp === p.items[0]!.timestamp && pages[k - 1]!.items.at(-1)!.log_id !== p.items[0]!.log_id);
    expect(sameTime, "some page boundary falls between two logs of the same time").toBeGreaterThan(0);
  });

  it("a page of 1 or 2 walks the newest minute entry by entry", async () => {
    const whole = (await restPage("limit=200")).items;
    const ones = await walk((cursor) => mcpPage({ limit: 1, ...(cursor ? { cursor } : {}) }));
    expect(ones.flatMap((p) => p.items)).toEqual(whole);
    const twos = await walk((cursor) => mcpPage({ limit: 2, ...(cursor ? { cursor } : {}) }));
    expect(twos.flatMap((p) => p.items)).toEqual(whole);
  });

  it("since keeps the entries at or after it, in every instant form, and pages within them", async () => {
    const cut = morning(DAYS - 7);
    const r = await mcpPage({ since: cut, limit: 50 });
    expect(r).toMatchObject({ total_count: 28, next_cursor: null });
    expect(r.items).toHaveLength(28);
    expect(r.items.at(-1)!.timestamp).toBe(cut);
    expect(r.items.every((e) => e.timestamp >= cut)).toBe(true);
    // The same instant with an offset, and the day as a date (UTC midnight, before 09:00).
    const offset = cut.replace("T09:00:00.000Z", "T10:00+01:00");
    expect((await mcpPage({ since: offset, limit: 50 })).items).toEqual(r.items);
    expect((await mcpPage({ since: cut.slice(0, 10), limit: 50 })).items).toEqual(r.items);
    // One millisecond later leaves that morning's four entries out.
    const after = new Date(Date.parse(cut) + 1).toISOString();
    expect((await mcpPage({ since: after })).total_count).toBe(24);
    const pages = await walk((cursor) => mcpPage({ since: cut, limit: 5, ...(cursor ? { cursor } : {}) }));
    expect(pages.flatMap((p) => p.items)).toEqual(r.items);
    const bad = await callTool(mcp, "get_view_recent_events", { patient_id: pid, view_type: "symptom_snapshot", since: "last week" });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain("since");
  });

  it("a malformed cursor, or one of another view, is an error that says what to pass", async () => {
    for (const cursor of ["not-a-cursor", "W10", Buffer.from(JSON.stringify(["symptom_snapshot", "x", "y", "z", "k", "s", 0])).toString("base64url")]) {
      const r = await callTool(mcp, "get_view_recent_events", { patient_id: pid, view_type: "symptom_snapshot", cursor });
      expect(r.isError, cursor).toBe(true);
      expect(r.text).toMatch(/cursor must be the next_cursor of a previous answer, passed back unchanged; leave it out to start from the newest entry/);
    }
    const c = (await mcpPage({ limit: 1 })).next_cursor!;
    const other = await callTool(mcp, "get_view_recent_events", { patient_id: pid, view_type: "questionnaire_snapshot", cursor: c });
    expect(other.isError).toBe(true);
    expect(other.text).toContain("next_cursor of a symptom_snapshot answer");
  });
});

describe("GET /v1/state/{pid}/views/{view_type}/recent: since and cursor", () => {
  it("pages like the tool, keeping entries and items aligned and the SDK's fields", async () => {
    const first = await restPage("limit=7");
    expect(first).toMatchObject({ patient_id: pid, view_type: "symptom_snapshot", count: 7, total_count: DAYS * 4, next_cursor: expect.any(String) });
    const pages = await walk((cursor) => restPage(`limit=7${cursor ? `&cursor=${cursor}` : ""}`));
    const whole = (await restPage("limit=200")).items;
    expect(pages.flatMap((p) => p.items)).toEqual(whole);
    for (const p of pages as (Page & { entries: string[]; count: number })[]) {
      expect(p.entries).toHaveLength(p.items.length);
      expect(p.count).toBe(p.items.length);
      p.items.forEach((e, k) => expect(p.entries[k]).toContain(e.summary));
    }
    const since = await restPage(`since=${encodeURIComponent(morning(DAYS - 7))}&limit=200`);
    expect(since).toMatchObject({ total_count: 28, next_cursor: null });
    expect(since.items).toEqual(whole.slice(0, 28));
  });

  it("refuses a bad cursor or since with 422 naming the parameter", async () => {
    const bad = await rest("cursor=not-a-cursor");
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toMatchObject({ message: expect.stringContaining("cursor must be the next_cursor of a previous answer"), details: [{ location: ["query", "cursor"] }] });
    const since = await rest("since=yesterday");
    expect(since.statusCode).toBe(422);
    expect(since.json().details[0].location).toEqual(["query", "since"]);
  });

  it("a cursor stays put when entries arrive between pages: newer ones wait for a new first page, older ones come in their place", async () => {
    const who = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
    await post(Array.from({ length: 14 }, (_, i) => checkIn(who, i + 14)).flat());
    const get = async (q: string): Promise<Page> => (await t.app.inject({ method: "GET", url: `/v1/state/${who}/views/symptom_snapshot/recent?${q}`, headers: t.auth })).json();
    const before = (await get("limit=200")).items;
    const p1 = await get("limit=10");
    // A check-in newer than all, and one at an older morning the first page has not reached.
    const [newer] = await post(checkIn(who, DAYS + 1, new Date(Date.now() - 60_000).toISOString()));
    const [older] = await post(checkIn(who, 3, morning(16).replace("T09:00", "T21:00")));
    const rest2 = await walk((cursor) => get(`limit=10&cursor=${cursor ?? p1.next_cursor}`));
    const after = rest2.flatMap((p) => p.items);
    expect(after.some((e) => e.log_id === newer)).toBe(false);
    expect(after.filter((e) => e.log_id === older)).toHaveLength(3);
    expect([...p1.items, ...after.filter((e) => e.log_id !== older && e.timestamp !== morning(16).replace("T09:00", "T21:00"))]).toEqual(before);
  });

  it("the client library pages the route: items() yields every entry once", async () => {
    const pss = new PatientStateClient({ baseUrl: baseUrl(t.app), apiKey: t.adminKey });
    const all: Item[] = [];
    for await (const e of pss.state.recent(pid, "symptom_snapshot", { limit: 9 }).items()) all.push(e);
    expectWholeHistory(all);
    const page = await pss.state.recent(pid, "symptom_snapshot", { limit: 3, since: morning(DAYS - 1) });
    expect(page).toMatchObject({ count: 3, total_count: 4, next_cursor: expect.any(String) });
  });
});
