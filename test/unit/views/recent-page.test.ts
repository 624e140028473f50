import { describe, expect, it } from "vitest";
import { allRecentEntries, VIEW_TYPES, type RecentEntry, type ViewType } from "../../../readmodels/views/index.js";
import type { PatientState } from "../../../readmodels/patient-state.js";
import { recentPage } from "../../../src/state/recent-page.js";
import { AppError } from "../../../src/errors.js";
import { at, given, log } from "../readmodels/given.js";
import { allLogs, AS_OF } from "./fixtures.js";

/** Every page from the first at `limit`, following next_cursor. */
function walk(type: ViewType, state: PatientState, limit: number, since?: string): RecentEntry[] {
  const out: RecentEntry[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < 500; n++) {
    const p = recentPage(type, state, AS_OF, { limit, since, cursor }, ["query", "cursor"]);
    out.push(...p.entries);
    if (p.next_cursor === null) return out;
    cursor = p.next_cursor;
  }
  throw new Error("no last page");
}

describe("recentPage", () => {
  it("gives every entry of every view once, in order, whatever the page size", () => {
    const s = given(allLogs());
    for (const t of VIEW_TYPES) {
      const all = allRecentEntries(t, s, AS_OF);
      for (const limit of [1, 2, 3, 5]) expect(walk(t, s, limit), `${t} by ${limit}`).toEqual(all);
    }
  });

  it("gives back each copy of identical entries (one log listing a lab twice) when a page splits them", () => {
    const k = { loinc_code: "2823-3", test_name: "Potassium", value_numeric: 4.1, unit: "mmol/L" };
    const labs = log("lab_results", at(3), { results: [k, k, k, { loinc_code: "2951-2", test_name: "Sodium", value_numeric: 139, unit: "mmol/L" }] });
    const s = given([labs, log("lab_results", at(2), { results: [k] })]);
    const all = allRecentEntries("labs_snapshot", s, AS_OF);
    expect(all.filter((e) => e.summary === "Potassium 4.1 mmol/L" && e.log_id === labs.id)).toHaveLength(3);
    for (const limit of [1, 2, 3]) expect(walk("labs_snapshot", s, limit), `by ${limit}`).toEqual(all);
  });

  it("since keeps entries at or after it; total_count counts them on every page", () => {
    const s = given(allLogs());
    const since = at(16);
    const kept = allRecentEntries("symptom_snapshot", s, AS_OF).filter((e) => Date.parse(e.timestamp) >= Date.parse(since));
    expect(kept.length).toBeGreaterThan(2);
    expect(walk("symptom_snapshot", s, 2, since)).toEqual(kept);
    expect(recentPage("symptom_snapshot", s, AS_OF, { limit: 1, since }, ["query", "cursor"]).total_count).toBe(kept.length);
  });

  it("cursorAfter(n) continues after the first n entries of a page (a page cut to fit an answer)", () => {
    const s = given(allLogs());
    const all = allRecentEntries("symptom_snapshot", s, AS_OF);
    const p = recentPage("symptom_snapshot", s, AS_OF, { limit: 6 }, ["q"]);
    const next = recentPage("symptom_snapshot", s, AS_OF, { limit: 2, cursor: p.cursorAfter(4) }, ["q"]);
    expect(next.entries).toEqual(all.slice(4, 6));
  });

  it("refuses a cursor it did not give, or one of another view, naming where it was", () => {
    const s = given(allLogs());
    const bad = (cursor: string, type: ViewType = "symptom_snapshot") => {
      try {
        recentPage(type, s, AS_OF, { limit: 1, cursor }, ["arguments", "cursor"]);
      } catch (e) {
        return e as AppError;
      }
      throw new Error("no error");
    };
    for (const c of ["x", "", "bnVsbA", Buffer.from("[1,2]").toString("base64url")]) {
      expect(bad(c)).toMatchObject({ code: "validation", details: [{ location: ["arguments", "cursor"] }] });
    }
    const c = recentPage("symptom_snapshot", s, AS_OF, { limit: 1 }, ["q"]).next_cursor!;
    expect(bad(c, "labs_snapshot").message).toContain("next_cursor of a symptom_snapshot answer");
  });
});
