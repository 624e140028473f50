import type { FhirLog } from "../../fhir/inbound/index.js";
import { canonicalJson } from "../../readmodels/state-diff.js";
import { digest } from "../control/hash.js";
import { fieldIssue, type ErrorDetail } from "../errors.js";
import { validateEnvelope } from "../logs/envelope.js";
import type { Resource } from "../../fhir/types.js";

/** One resource's logs, ready for the write path, with how each is keyed. */
export interface ResourceLogs {
  /** The logs as POST /v1/logs/batch takes them. */
  raw: Record<string, unknown>[];
  /** Keys for logs sent without one: the resource's content digest, so a re-send is a duplicate. */
  generated?: string[];
}

/**
 * A digest of what was sent for which patient: the same resource sent again (a retried
 * request, the same Bundle twice) derives the same keys and so stores nothing twice,
 * while an edited resource (a new clinical status) is new.
 */
export function contentKey(patientId: string, resource: Resource): string {
  return `fhir:${digest(patientId, canonicalJson(resource))}`;
}

/**
 * A resource's derived logs for one patient. With a caller's key K, log n is keyed `K:n`
 * (what the hosted product suggests); without, by content (`fhir:<digest>:n`).
 */
export function resourceLogs(logs: FhirLog[], patientId: string, resource: Resource, key: string | undefined): ResourceLogs {
  if (key !== undefined) return { raw: logs.map((l, n) => ({ ...l, patient_id: patientId, idempotency_key: `${key}:${n}` })) };
  const byContent = contentKey(patientId, resource);
  return { raw: logs.map((l) => ({ ...l, patient_id: patientId })), generated: logs.map((_, n) => `${byContent}:${n}`) };
}

/**
 * The catalog's verdict on each derived log before anything is written, so a resource
 * is stored whole or not at all: a mapped payload the catalog refuses (a value too long
 * for its field, say) is that resource's error, located in the resource. The write path
 * validates each log again (every log written is); it alone would answer a
 * `validation_error` at a log path the resource does not have, store a resource's other
 * logs, and let a transaction through (test/e2e/fhir-write.test.ts pins this).
 */
export function catalogProblems(raw: Record<string, unknown>[], at: (string | number)[]): { message: string; details: ErrorDetail[] } | null {
  for (const log of raw) {
    const checked = validateEnvelope(log, at, new Date().toISOString());
    if (!checked.ok) {
      const message = `maps to a ${String(log.log_type)} log the catalog refuses: ${checked.message}`;
      return { message, details: [fieldIssue(at, message)] };
    }
  }
  return null;
}
