import type { FhirLog } from "../../../fhir/inbound/index.js";
import type { ModuleKey } from "../../../readmodels/module.js";
import type { ModulePayloads } from "../../../readmodels/payloads.js";
import { given, log, payload } from "../readmodels/given.js";

/** The module `key` after folding derived logs, stored as the service stores them (timestamp defaulted to acceptance). */
export function folded<K extends ModuleKey>(key: K, logs: readonly FhirLog[], accepted = "2026-01-01T00:00:00.000Z"): ModulePayloads[K] {
  const records = logs.map((l) => ({ ...log(l.log_type, new Date(l.timestamp ?? accepted).toISOString(), l.payload), trace: l.trace, metadata: l.metadata }));
  return payload(given(records), key);
}
