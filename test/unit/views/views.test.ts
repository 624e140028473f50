import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MODULE_KEYS } from "../../../readmodels/registry.js";
import { emptyPatientState, evolvePatient } from "../../../readmodels/patient-state.js";
import {
  VIEW_INPUTS, VIEW_TYPES, isViewType, recentEntries, renderMarkdown, renderView, viewsAffectedBy,
} from "../../../readmodels/views/index.js";
import { at, given, log } from "../readmodels/given.js";
import { allLogs, blockOf, symptomLogs, vitalLogs } from "./fixtures.js";

const logs = allLogs();
const state = given(logs);

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

describe("views", () => {
  it("renders every view type with stable snake_case block ids, temp blocks apart, and refs to real logs only", () => {
    const known = new Set(logs.map((l) => l.id));
    for (const t of VIEW_TYPES) {
      const v = renderView(t, state);
      expect(v.view_type).toBe(t);
      expect(v.view_id).toMatch(new RegExp(`^${t}:[0-9a-f]{16}$`));
      expect(v.valid_from).toBe(at(20, 12));
      expect(v.valid_to).toBeNull();
      expect(v.blocks.length).toBeGreaterThan(0);
      expect(v.blocks.every((b) => b.segment !== "temp")).toBe(true);
      expect(v.temp.every((b) => b.segment === "temp")).toBe(true);
      const all = [...v.blocks, ...v.temp];
      expect(new Set(all.map((b) => b.id)).size).toBe(all.length);
      for (const b of all) {
        expect(b.id).toMatch(/^[a-z][a-z0-9_]*$/);
        expect(b.text.trim()).not.toBe("");
        expect(b.refs).toEqual([...new Set(b.refs)].sort());
        for (const r of b.refs) expect(known.has(r)).toBe(true);
        // Every fact is traceable to a log, except the profile's list of what is missing.
        if (b.id !== "missing_essentials") expect(b.refs.length).toBeGreaterThan(0);
      }
    }
  });

  it("returns a valid empty view for a patient with no data", () => {
    for (const t of VIEW_TYPES) {
      const v = renderView(t, emptyPatientState("pat_1"));
      expect(v).toMatchObject({ view_type: t, valid_from: null, valid_to: null, blocks: [] });
      if (t !== "profile_snapshot") expect(v.temp).toEqual([]);
      expect(renderView(t, emptyPatientState("pat_1")).view_id).toBe(v.view_id);
    }
  });

  it("gives the same view_id for the same state and a different one when the state changes", () => {
    const again = given([...logs].reverse());
    for (const t of VIEW_TYPES) expect(renderView(t, again)).toEqual(renderView(t, state));
    const more = given([...logs, log("symptom_report", at(20, 13), { instrument: "esas_r", symptoms: [{ name: "pain", score: 3 }] })]);
    expect(renderView("symptom_snapshot", more).view_id).not.toBe(renderView("symptom_snapshot", state).view_id);
    expect(renderView("labs_snapshot", more).view_id).toBe(renderView("labs_snapshot", state).view_id);
  });

  it("takes the as-of time from the view's own modules, so other logs do not move its week", () => {
    const withLater = given([...logs, log("lab_results", at(28), { results: [{ test_name: "CRP", value_numeric: 3, unit: "mg/L" }] })]);
    expect(renderView("symptom_snapshot", withLater)).toEqual(renderView("symptom_snapshot", state));
    expect(renderView("labs_snapshot", withLater).valid_from).toBe(at(28));
  });

  it("keeps entries before the first of the week's 7 calendar days out of the week segment", () => {
    const f = vitalLogs();
    // As of the 20th: the week is the 14th to the 20th, whole days in the patient's zone.
    const edge = log("vitals_measurement", at(13, 23, 59), { measurements: { heart_rate_bpm: 111 } });
    const inside = log("vitals_measurement", at(14, 0, 0), { measurements: { heart_rate_bpm: 99 } });
    const b = blockOf(renderView("vitals_snapshot", given([...f.logs, edge, inside])), "week_summary");
    expect(b.refs).toContain(inside.id);
    expect(b.refs).not.toContain(edge.id);
    expect(b.refs).not.toContain(f.old.id);
    expect(b.text).toContain("**Heart rate**: min 72 / avg 85.5 / max 99 bpm (2 readings)");
  });

  it("never reads the clock: rendering at any system time gives the same view", () => {
    const baseline = VIEW_TYPES.map((t) => renderView(t, state));
    vi.spyOn(Date, "now").mockImplementation(() => {
      throw new Error("renderView read the clock");
    });
    expect(VIEW_TYPES.map((t) => renderView(t, state))).toEqual(baseline);
    vi.restoreAllMocks();
    vi.useFakeTimers();
    fc.assert(
      fc.property(fc.date({ min: new Date("1990-01-01"), max: new Date("2100-01-01"), noInvalidDate: true }), fc.constantFrom(...VIEW_TYPES), (now, t) => {
        vi.setSystemTime(now);
        expect(renderView(t, state)).toEqual(baseline[VIEW_TYPES.indexOf(t)]);
        expect(recentEntries(t, state, 5)).toEqual(recentEntries(t, state, 5));
      }),
      { numRuns: 50 },
    );
  });

  it("renders markdown with the title, the patient label, every block's name and text, and temp under To follow up", () => {
    for (const t of VIEW_TYPES) {
      const v = renderView(t, state);
      const md = renderMarkdown(v, "Ada L.");
      expect(md.startsWith("# ")).toBe(true);
      expect(md.split("\n")[0]).toContain("Ada L.");
      for (const b of v.blocks) expect(md).toContain(`## ${b.name}\n\n${b.text}`);
      if (v.temp.length > 0) {
        const followUp = md.indexOf("## To follow up");
        expect(followUp).toBeGreaterThan(0);
        for (const b of v.temp) expect(md.indexOf(`### ${b.name}\n\n${b.text}`)).toBeGreaterThan(followUp);
      } else expect(md).not.toContain("To follow up");
    }
    expect(renderMarkdown(renderView("labs_snapshot", emptyPatientState("p")))).toContain("Nothing recorded yet");
  });

  it("maps changed modules to the views that read them", () => {
    expect(viewsAffectedBy(["symptoms"])).toEqual(["symptom_snapshot"]);
    expect(viewsAffectedBy(["vitals", "adherence"])).toEqual(["medication_snapshot", "vitals_snapshot"]);
    expect(viewsAffectedBy(["glucose"])).toEqual(["device_snapshot"]);
    expect(viewsAffectedBy(["allergies", "conversations"])).toEqual(["profile_snapshot", "engagement_snapshot"]);
    expect(viewsAffectedBy([])).toEqual([]);
    for (const t of VIEW_TYPES) for (const k of VIEW_INPUTS[t]) expect(MODULE_KEYS).toContain(k);
    expect(isViewType("labs_snapshot")).toBe(true);
    expect(isViewType("labs")).toBe(false);
  });

  it("re-renders only the affected views: a log leaves every other view unchanged", () => {
    fc.assert(
      fc.property(fc.constantFrom(...logs), (l) => {
        const extra = { ...l, id: `${l.id}_x`, timestamp: at(25) };
        const { state: next, changes } = evolvePatient(state, extra);
        const affected = viewsAffectedBy(changes.map((c) => c.module_type));
        for (const t of VIEW_TYPES) if (!affected.includes(t)) expect(renderView(t, next)).toEqual(renderView(t, state));
      }),
      { numRuns: 40 },
    );
  });

  it("lists the recent entries behind a view newest first, up to the limit", () => {
    const f = symptomLogs();
    const s = given(f.logs);
    const all = recentEntries("symptom_snapshot", s, 1000);
    expect(all.total_count).toBe(all.entries.length);
    expect(all.entries.length).toBeGreaterThan(10);
    const times = all.entries.map((e) => Date.parse((e as { timestamp: string }).timestamp));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const top = recentEntries("symptom_snapshot", s, 3);
    expect(top.total_count).toBe(all.total_count);
    expect(top.entries).toEqual(all.entries.slice(0, 3));
    expect(top.entries[0]).toEqual({ timestamp: at(20, 12), module_type: "symptoms", kind: "health_metric", summary: "energy 6/10", log_id: f.energy2.id });
    expect(recentEntries("symptom_snapshot", s, 0)).toEqual({ entries: [], total_count: all.total_count });
    expect(recentEntries("labs_snapshot", emptyPatientState("p"), 10)).toEqual({ entries: [], total_count: 0 });
    for (const t of VIEW_TYPES) {
      for (const e of recentEntries(t, state, 100).entries) {
        expect(Object.keys(e).sort()).toEqual(["kind", "log_id", "module_type", "summary", "timestamp"]);
        expect(VIEW_INPUTS[t]).toContain(e.module_type);
      }
    }
  });
});
