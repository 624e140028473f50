import { expect } from "vitest";
import { deriveLogs, type FhirLog } from "../../../fhir/inbound/index.js";
import type { Resource } from "../../../fhir/types.js";
import { validateEnvelope } from "../../../src/logs/envelope.js";

/** Resources of the same Bundle, for references between entries. */
export const contextOf = (...others: Resource[]) => ({
  resolve: (ref: string) => others.find((r) => `${r.resourceType}/${r.id}` === ref || (ref.startsWith("#") && r.id === ref.slice(1))),
});

/** The logs a resource derives, each checked against the catalog as POST /v1/logs/batch would. */
export function derived(resource: Resource, ...others: Resource[]): FhirLog[] {
  const out = deriveLogs(resource, contextOf(...others), `urn:test:${resource.resourceType}`);
  if (!out.ok) throw new Error(`${out.code}: ${out.message}`);
  for (const log of out.logs) {
    const checked = validateEnvelope({ ...log, patient_id: "pat_1" }, ["log"], "2026-01-01T00:00:00.000Z");
    expect(checked.ok ? [] : checked.details, `${log.log_type} is a valid catalog log`).toEqual([]);
  }
  return out.logs;
}

/** The error a resource gets instead of logs. */
export function refused(resource: Resource, ...others: Resource[]) {
  const out = deriveLogs(resource, contextOf(...others), `urn:test:${resource.resourceType}`);
  if (out.ok) throw new Error(`expected a refusal, got ${JSON.stringify(out.logs.map((l) => l.payload))}`);
  return out;
}
