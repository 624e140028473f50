import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { AuditEntry } from "../../src/audit/audit-log.js";
import { encodeEntry, MAX_FIELD_CHARS } from "../../src/audit/encode-entry.js";

const base: AuditEntry = {
  at: "2026-11-26T10:00:00.000Z",
  organization_id: "org_default",
  project_id: "prj_default",
  key_id: "key_admin",
  credential: "api_key",
  method: "POST",
  route: "/v1/logs/batch",
  tool: null,
  patient_id: null,
  patient_ids: [],
  status: 200,
  request_id: "req-1",
};

const MEGABYTE = "x".repeat(1024 * 1024);
const bytes = (s: string) => Buffer.byteLength(s);

describe("an audit entry as stored", () => {
  it("lists the valid patient of a batch and counts a 1 MB patient id instead of carrying it", () => {
    const json = encodeEntry({ ...base, patient_ids: ["pat_A", MEGABYTE, "pat_A"] }, 64 * 1024);
    expect(bytes(json)).toBeLessThan(64 * 1024);
    expect(JSON.parse(json)).toMatchObject({ patient_id: null, patient_ids: ["pat_A"], patient_ids_omitted: 1 });
  });

  it("cuts a client-chosen text (an MCP resource URI) and marks its length", () => {
    const tool = `resources/read patient://${MEGABYTE}`;
    const e = JSON.parse(encodeEntry({ ...base, tool }, 64 * 1024)) as AuditEntry;
    expect(e.tool).toBe(`${tool.slice(0, MAX_FIELD_CHARS)}… (${tool.length} characters)`);
  });

  it("lists ids in the order named while they fit, and counts the rest", () => {
    const ids = Array.from({ length: 5_000 }, (_, i) => `pat_${String(i).padStart(26, "0")}`);
    const json = encodeEntry({ ...base, patient_ids: ids }, 16 * 1024);
    const e = JSON.parse(json) as AuditEntry;
    expect(bytes(json)).toBeLessThanOrEqual(16 * 1024);
    expect(e.patient_ids).toEqual(ids.slice(0, e.patient_ids.length));
    expect(e.patient_ids.length).toBeGreaterThan(400);
    expect(e.patient_ids_omitted).toBe(5_000 - e.patient_ids.length);
  });

  it("keeps an entry that names nothing odd exactly as it was", () => {
    const e = { ...base, patient_id: "pat_A", patient_ids: ["pat_A"] };
    expect(JSON.parse(encodeEntry(e, 64 * 1024))).toEqual(e);
  });

  it("stays under its bound whatever the request carried", () => {
    const anyText = fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: "binary", maxLength: 5_000 }), fc.constant(MEGABYTE));
    fc.assert(
      fc.property(anyText, fc.option(anyText, { nil: null }), fc.array(anyText, { maxLength: 50 }), fc.integer({ min: 8 * 1024, max: 256 * 1024 }), (route, tool, ids, max) => {
        const json = encodeEntry({ ...base, route, tool, request_id: route, patient_id: ids[0] ?? null, patient_ids: ids }, max);
        expect(bytes(json)).toBeLessThanOrEqual(max);
        const e = JSON.parse(json) as AuditEntry;
        expect(e.patient_ids.length + (e.patient_ids_omitted ?? 0)).toBe(new Set(ids).size);
      }),
      { seed: 25, numRuns: 300 },
    );
  });
});
