import { deriveLogs } from "../../fhir/inbound/index.js";
import { contentId } from "../../fhir/lib/datatypes.js";
import type { Resource } from "../../fhir/types.js";
import { echoField, echoValue, fieldIssue, type ErrorDetail } from "../errors.js";
import type { BatchAnswer, LogWriter, WriteScope } from "../logs/log-writer.js";
import { containedOf } from "./bundle-entries.js";
import { catalogProblems, resourceLogs } from "./derived-write.js";

/**
 * The value at a path of the resource, for an error's input_value; for a missing element
 * (Observation without status), the object that lacks it, as docs/api.md promises.
 */
export function valueAt(resource: unknown, path: (string | number)[]): unknown {
  if (path.length === 0) return echoValue(resource);
  let parent = resource;
  for (const p of path.slice(0, -1)) parent = typeof parent === "object" && parent !== null ? (parent as Record<string | number, unknown>)[p] : undefined;
  return echoField(parent, path[path.length - 1]!);
}

/**
 * The writer locates an unknown patient in each log (`…resource.patient_id`); this body
 * names its patient once, beside the resource, so that is where the client must look.
 */
function patientInBody(answer: BatchAnswer): BatchAnswer {
  for (const e of answer.errors) {
    e.details = e.details.map((d) => (d.type === "patient_not_found" ? { ...d, field: "patient_id", location: ["body", "patient_id"] } : d));
  }
  return answer;
}

/** A batch answer for a resource refused before anything was written. */
export function refusedAnswer(code: string, message: string, details: ErrorDetail[]): BatchAnswer {
  return { accepted: 0, failed: 1, duplicates: 0, errors: [{ index: 0, code, message, details }], results: [{ index: 0, id: null, status: "failed" }] };
}

/**
 * POST /v1/fhir/resource: one resource for the patient the body names (never its
 * `subject`), as the logs it maps to, stored together or not at all. The answer is the
 * batch answer over those logs, except that `accepted` counts logs stored now or by an
 * earlier send of the same key or content: the hosted product's SDK raises on a retry
 * answered `accepted: 0`.
 */
export async function writeResource(
  writer: LogWriter,
  scope: WriteScope,
  input: { patient_id: string; resource: Resource; idempotency_key?: string },
): Promise<BatchAnswer> {
  const at = ["body", "resource"];
  // A resource without an id is named by its content, never by the patient: its trace names the resource.
  const derived = deriveLogs(input.resource, { resolve: containedOf(input.resource) }, contentId(input.resource));
  if (!derived.ok) {
    const details = derived.issues.map((i) => fieldIssue([...at, ...i.path], i.message, valueAt(input.resource, i.path)));
    return refusedAnswer(derived.code, derived.message, details);
  }
  const { raw, generated } = resourceLogs(derived.logs, input.patient_id, input.resource, input.idempotency_key);
  const problem = catalogProblems(raw, at);
  if (problem) return refusedAnswer("fhir_unmappable", `${input.resource.resourceType} ${problem.message}`, problem.details);
  const answer = await writer.writeBatch(scope, raw, {
    source: "fhir",
    atomic: false,
    at: () => at,
    ...(generated ? { generatedKey: (i: number) => generated[i]! } : { keySpace: "fhir" }),
  });
  return patientInBody({ ...answer, accepted: answer.accepted + answer.duplicates });
}
