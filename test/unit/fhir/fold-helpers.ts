import type { FhirLog } from "../../../fhir/inbound/index.js";
import type { LogRecord } from "../../../readmodels/log-record.js";
import type { ModuleKey } from "../../../readmodels/module.js";
import { moduleEntry, replayPatient } from "../../../readmodels/patient-state.js";
import type { ModulePayloads } from "../../../readmodels/payloads.js";

let seq = 0;

/** Derived logs as the service stores them: an id in acceptance order, the event time in UTC (acceptance time when the resource gave none). */
export function records(logs: readonly FhirLog[], acceptedAt = "2026-01-01T00:00:00.000Z"): LogRecord[] {
  return logs.map((l) => {
    seq += 1;
    const timestamp = new Date(l.timestamp ?? acceptedAt).toISOString();
    return {
      id: `log_01JTEST${String(seq).padStart(19, "0")}`, organization_id: "org_1", project_id: "prj_1", patient_id: "pat_1",
      timestamp, ingested_at: acceptedAt, log_type: l.log_type, payload: l.payload, trace: l.trace, metadata: l.metadata,
    };
  });
}

/** The module a patient's state holds after replaying the derived logs (of one or several resources, in order). */
export function folded<K extends ModuleKey>(key: K, ...logs: FhirLog[][]): ModulePayloads[K] {
  const entry = moduleEntry(replayPatient("pat_1", "UTC", logs.flatMap((l) => records(l))), key);
  if (!entry) throw new Error(`module ${key} not present`);
  return entry.payload;
}
