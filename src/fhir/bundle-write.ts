import type { Bundle, BundleEntry, Patient as FhirPatient } from "@medplum/fhirtypes";
import { deriveLogs, type FhirLog } from "../../fhir/inbound/index.js";
import type { Resource } from "../../fhir/types.js";
import { AppError, fieldIssue } from "../errors.js";
import type { PatientStore } from "../control/patients.js";
import type { LogWriter, WriteScope } from "../logs/log-writer.js";
import { BundleIndex, entriesOf, isPatient, patientReference } from "./bundle-entries.js";
import { createPatient, matchPatient, type PatientMatch } from "./bundle-patients.js";
import { expressionOf, failedEntry, skippedEntry, writtenEntry, type EntryFailure } from "./bundle-response.js";
import { catalogProblems, resourceLogs } from "./derived-write.js";
import { valueAt } from "./resource-write.js";

export interface BundleOptions {
  /** The patient of entries that reference none. */
  patient_id?: string;
  /** Create the patient of a Patient entry no identifier finds. */
  create_patients: boolean;
}

/** An entry on its way: its patient (a match, or another entry's), and its logs or its failure. */
type Plan =
  | { kind: "failed"; failure: EntryFailure }
  | { kind: "skipped"; why: string }
  | { kind: "mapped"; resource: Resource; patient: PatientMatch | { kind: "entry"; entry: number }; logs: FhirLog[] };

const PLACEHOLDER_PATIENT = "pat_placeholder";

/**
 * POST /v1/fhir: a batch, transaction or collection Bundle, each entry mapped to logs for
 * its patient and stored whole or not at all. A transaction is refused whole (422, nothing
 * written, no patient created) when any entry cannot be stored. Entries of one Bundle go
 * through the write path together; a re-sent Bundle derives the same content keys and
 * stores nothing twice.
 */
export async function writeBundle(
  deps: { writer: LogWriter; patients: PatientStore },
  scope: WriteScope,
  body: Bundle,
  opts: BundleOptions,
): Promise<{ answer: { resourceType: "Bundle"; type: "batch-response" | "transaction-response"; entry: BundleEntry[] }; patients: string[] }> {
  const shape = entriesOf(body);
  if (!shape.ok) throw new AppError("validation", `Bundle ${shape.path.join(".")} ${shape.message}`, [fieldIssue(["body", ...shape.path], shape.message)]);
  const index = new BundleIndex(shape.entries);
  const matches = new Map<number, PatientMatch>();
  await Promise.all(
    shape.entries.map(async (e, i) => {
      if (isPatient(e.resource)) matches.set(i, await matchPatient(deps.patients, scope, e.resource, opts.create_patients));
    }),
  );
  const byId = new Map<string, Promise<PatientMatch>>();
  const lookUp = (id: string) => {
    let m = byId.get(id);
    if (!m) {
      const allowed = scope.only_patient_id === undefined || scope.only_patient_id === id;
      m = (allowed ? deps.patients.getActive(scope.project_id, id) : Promise.resolve(null)).then((p): PatientMatch =>
        p ? { kind: "found", patientId: p.id } : { kind: "missing", path: [], message: `patient ${id} not found` });
      byId.set(id, m);
    }
    return m;
  };
  const plans = await Promise.all(shape.entries.map((e, i) => planEntry(e, i, index, matches, opts, lookUp)));

  const failures = plans.flatMap((p, i) => (p.kind === "failed" ? [{ i, f: p.failure }] : []));
  if (body.type === "transaction" && failures.length > 0) {
    // An element's problem echoes it (a missing one, the object lacking it); one of the whole entry echoes nothing.
    const echo = (i: number, path: (string | number)[]) => (path.length > 0 ? valueAt(shape.entries[i]!.resource, path) : undefined);
    const details = failures.map(({ i, f }) => ({ ...fieldIssue(["body", "entry", i, "resource", ...f.path], f.message, echo(i, f.path)), type: f.code }));
    throw new AppError("validation", `transaction refused: ${failures.length} of ${plans.length} entries cannot be stored (first: ${expressionOf(failures[0]!.i, failures[0]!.f.path)} ${failures[0]!.f.message}); nothing was written`, details);
  }

  const patientOf = await createPatients(deps.patients, scope, shape.entries, plans, matches);
  const raw: Record<string, unknown>[] = [];
  const keys: string[] = [];
  const logsOf = new Map<number, { index: number; log_type: string }[]>();
  const patients = new Set<string>();
  const entryOfLog: number[] = [];
  plans.forEach((p, i) => {
    if (p.kind !== "mapped") return;
    const patient = patientOf(i);
    if (typeof patient !== "string") {
      plans[i] = { kind: "failed", failure: patient };
      return;
    }
    patients.add(patient);
    const made = resourceLogs(p.logs, patient, p.resource, undefined);
    logsOf.set(i, made.raw.map((l, k) => ({ index: raw.length + k, log_type: String(l.log_type) })));
    for (const l of made.raw) {
      raw.push(l);
      entryOfLog.push(i);
    }
    keys.push(...made.generated!);
  });
  const answer = await deps.writer.writeBatch(scope, raw, {
    source: "fhir",
    atomic: false,
    at: (k) => ["body", "entry", entryOfLog[k]!, "resource"],
    generatedKey: (k) => keys[k]!,
  });
  const entry: BundleEntry[] = plans.map((p, i) =>
    p.kind === "failed" ? failedEntry(i, p.failure) : p.kind === "skipped" ? skippedEntry(p.why) : writtenEntry(i, logsOf.get(i)!, answer),
  );
  return { answer: { resourceType: "Bundle", type: body.type === "transaction" ? "transaction-response" : "batch-response", entry }, patients: [...patients] };
}

async function planEntry(
  e: BundleEntry,
  i: number,
  index: BundleIndex,
  matches: Map<number, PatientMatch>,
  opts: BundleOptions,
  lookUp: (id: string) => Promise<PatientMatch>,
): Promise<Plan> {
  const resource = e.resource;
  if (!resource) return { kind: "failed", failure: { status: "400 Bad Request", code: "validation_error", message: "entry has no resource", path: [] } };
  const partOf = index.resultOf.get(i);
  if (partOf) return { kind: "skipped", why: `stored with ${partOf}, whose result it is` };
  let patient: PatientMatch | { kind: "entry"; entry: number };
  if (isPatient(resource)) patient = { kind: "entry", entry: i };
  else {
    const ref = patientReference(resource)?.reference;
    const j = index.indexOf(ref);
    const literal = ref ? /^Patient\/([A-Za-z0-9_-]{1,128})$/.exec(ref)?.[1] : undefined;
    if (j !== undefined && matches.has(j)) patient = { kind: "entry", entry: j };
    else if (literal) patient = await lookUp(literal);
    else if (ref === undefined && opts.patient_id !== undefined) patient = await lookUp(opts.patient_id);
    else {
      const message = ref?.startsWith("Patient?")
        ? `references ${ref}, a conditional reference, which is not supported: put the Patient in the Bundle with that identifier and reference its fullUrl (an existing patient holding the identifier is matched), or reference Patient/<id> with this service's patient id`
        : ref
        ? `references ${ref}, which is neither a Patient entry of this Bundle nor a patient of this project`
        : "names no patient: reference a Patient entry of the Bundle in subject (or patient), or send patient_id";
      return { kind: "failed", failure: { status: "404 Not Found", code: "patient_not_found", message, path: [] } };
    }
  }
  const missing = patient.kind === "entry" ? matches.get(patient.entry) : patient;
  if (missing?.kind === "missing" || missing?.kind === "ambiguous") {
    const message = patient.kind === "entry" && patient.entry !== i ? `its patient (entry ${patient.entry}): ${missing.message}` : missing.message;
    return { kind: "failed", failure: { ...unusable(missing), message, path: patient.kind === "entry" && patient.entry === i ? missing.path : [] } };
  }
  const derived = deriveLogs(resource, { resolve: index.resolverFor(i) }, e.fullUrl ?? `urn:pss:entry:${i}`);
  if (!derived.ok) {
    const first = derived.issues[0];
    return { kind: "failed", failure: { status: "422 Unprocessable Entity", code: derived.code, message: derived.message, path: first?.path ?? [] } };
  }
  const problem = catalogProblems(resourceLogs(derived.logs, PLACEHOLDER_PATIENT, resource, "check").raw, []);
  if (problem) return { kind: "failed", failure: { status: "422 Unprocessable Entity", code: "fhir_unmappable", message: `${resource.resourceType} ${problem.message}`, path: [] } };
  return { kind: "mapped", resource, patient, logs: derived.logs };
}

/** The status and code of an entry whose patient cannot be used (POST /v1/patients answers 409 for identifiers of two patients). */
function unusable(m: { kind: "missing" | "ambiguous" }): Pick<EntryFailure, "status" | "code"> {
  return m.kind === "ambiguous" ? { status: "409 Conflict", code: "ambiguous_patient" } : { status: "404 Not Found", code: "patient_not_found" };
}

/**
 * Creates the patients entries need (only those a stored entry uses), then tells each
 * entry its patient id, or why it has none.
 */
async function createPatients(
  patients: PatientStore,
  scope: WriteScope,
  entries: BundleEntry[],
  plans: Plan[],
  matches: Map<number, PatientMatch>,
): Promise<(i: number) => string | EntryFailure> {
  const resolved = new Map<number, string | EntryFailure>();
  const needed = new Set(plans.flatMap((p) => (p.kind === "mapped" && p.patient.kind === "entry" ? [p.patient.entry] : [])));
  await Promise.all(
    [...needed].map(async (j) => {
      const m = matches.get(j)!;
      if (m.kind === "found") resolved.set(j, m.patientId);
      else if (m.kind === "missing" || m.kind === "ambiguous") resolved.set(j, { ...unusable(m), message: m.message, path: m.path });
      else resolved.set(j, await createPatient(patients, scope, entries[j]!.resource as FhirPatient, m.identifiers));
    }),
  );
  return (i) => {
    const p = plans[i]!;
    if (p.kind !== "mapped") throw new Error("only mapped entries have a patient");
    if (p.patient.kind === "entry") {
      const r = resolved.get(p.patient.entry)!;
      if (typeof r === "string" || p.patient.entry === i) return r;
      return { ...r, message: `its patient (entry ${p.patient.entry}): ${r.message}` };
    }
    if (p.patient.kind === "found") return p.patient.patientId;
    if (p.patient.kind === "missing" || p.patient.kind === "ambiguous") return { ...unusable(p.patient), message: p.patient.message, path: p.patient.path };
    throw new Error("a create match is always reached through its Patient entry");
  };
}
