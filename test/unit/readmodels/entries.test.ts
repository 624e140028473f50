import { describe, expect, it } from "vitest";
import { applyEntry, type EntryMeta } from "../../../readmodels/lib/entities.js";
import { patchObject } from "../../../readmodels/lib/clocks.js";
import type { LogRecord } from "../../../readmodels/log-record.js";
import { log } from "./given.js";

interface Item extends EntryMeta {
  name: string | null;
  code: string | null;
  dose: number | null;
}

const BLANK = { name: null, code: null, dose: null };
const FIELDS = ["name", "code", "dose"] as const;

function write(list: readonly Item[], clocks: Record<string, string>, l: LogRecord, patch: Record<string, unknown>) {
  const index = list.findIndex((e) => e.name === patch.name);
  return applyEntry<Item>({
    list, clocks, ns: "items", index, keyOf: (e) => String(e.name), action: "add", patch, fields: FIELDS, blank: BLANK, log: l,
  });
}

describe("applyEntry", () => {
  it("clears a field to null in its place, and an older write does not bring it back", () => {
    const a = write([], {}, log("medication_list_update", "2026-01-01T10:00:00Z", {}), { name: "x", code: "C1", dose: 5 });
    const b = write(a.list, a.clocks, log("medication_list_update", "2026-01-02T10:00:00Z", {}), { name: "x", dose: null });
    expect(b.list[0]).toMatchObject({ name: "x", code: "C1", dose: null });
    expect(Object.keys(b.list[0]!)).toEqual(Object.keys(a.list[0]!));
    // Applied late, a write from before the clear changes nothing.
    const c = write(b.list, b.clocks, log("medication_list_update", "2026-01-01T12:00:00Z", {}), { name: "x", dose: 7 });
    expect(c.list[0]!.dose).toBeNull();
    // The inputs are never touched.
    expect(a.list[0]!.dose).toBe(5);
  });

  it("gives an entry the same JSON whether its fields were cleared or never sent", () => {
    const cleared = write([], {}, log("medication_list_update", "2026-01-01T10:00:00Z", {}), { name: "x", code: "C1" });
    const after = write(cleared.list, cleared.clocks, log("medication_list_update", "2026-01-02T10:00:00Z", {}), { name: "x", code: null });
    const never = write([], {}, log("medication_list_update", "2026-01-02T10:00:00Z", {}), { name: "x" });
    const shape = (e: Item) => JSON.stringify({ ...e, updated_at: "", sources: [] });
    expect(shape(after.list[0]!)).toBe(shape(never.list[0]!));
  });
});

describe("patchObject", () => {
  it("deletes a cleared leaf, unless the caller names it as a key that reads null", () => {
    const doc = { a: 1, b: 2, extensions: {} };
    const ts = "2026-01-01T00:00:00Z";
    expect(patchObject(doc, {}, [], { a: null }, ["a", "b"], ts).value).toEqual({ b: 2, extensions: {} });
    const kept = patchObject(doc, {}, [], { a: null }, ["a", "b"], ts, [], { a: null });
    expect(kept.value).toEqual({ a: null, b: 2, extensions: {} });
    expect(Object.keys(kept.value)).toEqual(["a", "b", "extensions"]);
    expect(doc.a).toBe(1);
  });
});
