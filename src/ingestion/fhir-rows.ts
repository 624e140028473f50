import type { Bundle, Patient as FhirPatient } from "@medplum/fhirtypes";
import { deriveLogs, isMappedType, type FhirLog } from "../../fhir/inbound/index.js";
import type { Resource } from "../../fhir/types.js";
import { BundleIndex, containedOf, entriesOf, isPatient, patientReference } from "../fhir/bundle-entries.js";
import { identifiersOf, patientInputOf } from "../fhir/bundle-patients.js";
import { contentKey } from "../fhir/derived-write.js";
import { isObject } from "../logs/envelope.js";

/**
 * A FHIR file (NDJSON: one resource, or one Bundle, a line) as the rows of a JSONL
 * ingestion file, so the job's pipeline (validation, patients, staging, review, replay)
 * takes it unchanged. A Patient becomes a patient row keyed by its identifiers; every
 * other resource becomes the log rows `deriveLogs` maps it to, naming its patient by the
 * reference a JSONL log uses (`system|value` of the Patient's first identifier, or a
 * service id). Two passes over the file: Patients first, so a resource may reference a
 * Patient on any line (a Bulk Data export's Patient.ndjson, concatenated with the others
 * in any order), and patient rows come before the logs that name them.
 */

/** A problem of one line; `structural` ones fail the job, as in a JSONL file. */
export interface FhirLineError {
  code: string;
  message: string;
  structural: boolean;
}

/** What one line gives in one pass: rows (JSONL text), errors, and resources skipped for their own faults. */
export interface FhirLineRows {
  rows: string[];
  errors: FhirLineError[];
  skipped: number;
  /**
   * The patient reference (as the line's log rows would name it) of each skipped resource
   * that names a patient it can be attributed to, so the job counts the skip for that patient.
   */
  skippedFor: string[];
}

const SERVICE_ID = /^pat_[0-9A-Za-z]{6,60}$/;
/** `Patient/<id>`, alone or at the end of an absolute URL. */
const PATIENT_REF = /(?:^|\/)Patient\/([A-Za-z0-9\-.]{1,64})$/;

type Parsed = { kind: "blank" } | { kind: "error"; error: FhirLineError } | { kind: "bundle"; bundle: Bundle } | { kind: "resource"; resource: Resource };

/** Whether a line reads as FHIR (an object with a `resourceType`) rather than a JSONL row: how a job sniffs its file. */
export function looksLikeFhir(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return isObject(v) && typeof v.resourceType === "string" && v.data === undefined;
  } catch {
    return false;
  }
}

function parse(text: string): Parsed {
  if (text.trim() === "") return { kind: "blank" };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    return { kind: "error", error: { code: "invalid_json", message: `not valid JSON: ${(err as Error).message}`, structural: true } };
  }
  if (!isObject(v) || typeof v.resourceType !== "string") return { kind: "error", error: { code: "invalid_row", message: "not a FHIR resource: a line must be a JSON object with a resourceType", structural: true } };
  if (v.resourceType === "Bundle") return { kind: "bundle", bundle: v as unknown as Bundle };
  return { kind: "resource", resource: v as unknown as Resource };
}

const out = (): FhirLineRows => ({ rows: [], errors: [], skipped: 0, skippedFor: [] });

export class FhirRows {
  /**
   * @param readAt The time the file is read: the date of a Patient's demographics when it
   * has no `meta.lastUpdated` (what the file says of the patient is what was known then),
   * where a clinical resource without a date is skipped instead.
   */
  constructor(private readonly readAt = new Date().toISOString()) {}

  /** `Patient/<id>` of the file's Patients → the reference their logs name them by. */
  private readonly byId = new Map<string, string>();
  /** `system|value` of every identifier a patient row declared → that row's reference. */
  private readonly declared = new Map<string, string>();

  /** Pass 1: the line's Patients as patient rows (one row per patient, whatever line repeats it). */
  patientRows(text: string): FhirLineRows {
    const o = out();
    const p = parse(text);
    if (p.kind === "resource" && isPatient(p.resource)) this.declare(p.resource, "", o);
    if (p.kind === "bundle" && entriesOf(p.bundle).ok) {
      (p.bundle.entry ?? []).forEach((e, i) => {
        if (isPatient(e.resource)) this.declare(e.resource, `Bundle.entry[${i}]: `, o);
      });
    }
    return o;
  }

  /**
   * The reference a Patient's logs name it by: the first identifier of the row that
   * declared any of its identifiers, else its id when that is a service id.
   */
  private refOf(p: FhirPatient): string | undefined {
    for (const e of identifiersOf(p)) {
      const ref = this.declared.get(`${e.system}|${e.value}`);
      if (ref) return ref;
    }
    return p.id && SERVICE_ID.test(p.id) ? p.id : undefined;
  }

  private declare(p: FhirPatient, where: string, o: FhirLineRows): void {
    let ref = this.refOf(p);
    const identifiers = identifiersOf(p);
    if (ref === undefined && identifiers.length > 0) {
      // A Patient seen before (the same patient in several Bundles) is one row: a second
      // row declaring its identifiers would be the job's duplicate_patient error.
      ref = `${identifiers[0]!.system}|${identifiers[0]!.value}`;
      for (const e of identifiers) this.declared.set(`${e.system}|${e.value}`, ref);
      o.rows.push(JSON.stringify({ type: "patient", data: patientInputOf(p, identifiers) }));
    }
    if (ref === undefined) {
      const message = `${where}Patient${p.id ? `/${p.id}` : ""} identifier: a Patient needs an identifier with system and value (the job finds and names patients by identifier), or a service patient id as its id`;
      o.errors.push({ code: "invalid_patient", message, structural: true });
      return;
    }
    if (p.id) this.byId.set(`Patient/${p.id}`, ref);
  }

  /** Pass 2: every other resource of the line as log rows; `line` goes into each log's metadata. */
  logRows(text: string, line: number): FhirLineRows {
    const o = out();
    const p = parse(text);
    if (p.kind === "error") o.errors.push(p.error);
    if (p.kind === "resource") this.resourceRows(p.resource, containedOf(p.resource), `urn:pss:line:${line}`, "", line, o, (r) => this.patientOf(r));
    if (p.kind !== "bundle") return o;
    const shape = entriesOf(p.bundle);
    if (!shape.ok) {
      o.errors.push({ code: "invalid_row", message: `Bundle.${shape.path.join(".")} ${shape.message}`, structural: true });
      return o;
    }
    const index = new BundleIndex(shape.entries);
    shape.entries.forEach((e, i) => {
      const where = `Bundle.entry[${i}]: `;
      if (!e.resource) {
        o.errors.push({ code: "fhir_invalid", message: `${where}the entry has no resource`, structural: false });
        o.skipped++;
        return;
      }
      // A DiagnosticReport's result Observations are mapped with the report, as POST /v1/fhir does.
      if (index.resultOf.has(i)) return;
      const patientOf = (r: Resource) => {
        const j = index.indexOf(patientReference(r)?.reference);
        const target = j === undefined ? undefined : shape.entries[j]?.resource;
        if (!isPatient(target)) return this.patientOf(r);
        return this.refOf(target) ?? { code: "unknown_patient", message: `its Patient (Bundle.entry[${j}]) could not be declared`, structural: true };
      };
      this.resourceRows(e.resource, index.resolverFor(i), e.fullUrl ?? `urn:pss:line:${line}:entry:${i}`, where, line, o, patientOf);
    });
    return o;
  }

  /** The reference naming a lone resource's patient: a Patient of the file, a service id, or an identifier. */
  private patientOf(r: Resource): string | FhirLineError {
    const ref = patientReference(r);
    const literal = ref?.reference ? PATIENT_REF.exec(ref.reference)?.[1] : undefined;
    if (literal) {
      const found = this.byId.get(`Patient/${literal}`) ?? (SERVICE_ID.test(literal) ? literal : undefined);
      if (found) return found;
    }
    if (!ref?.reference && ref?.identifier?.system && ref.identifier.value) return `${ref.identifier.system}|${ref.identifier.value}`;
    const message = ref?.reference
      ? `subject references ${ref.reference}, which is no Patient resource of the file (an existing patient is named by its service id, Patient/pat_..., or by identifier)`
      : "names no patient: subject (or patient) must reference a Patient of the file";
    return { code: "unknown_patient", message, structural: true };
  }

  private resourceRows(
    resource: Resource,
    resolve: (reference: string) => Resource | undefined,
    reference: string,
    where: string,
    line: number,
    o: FhirLineRows,
    patientOf: (r: Resource) => string | FhirLineError,
  ): void {
    // Patients are pass 1's; their own logs (demographics) once Patient is a mapped type.
    if (isPatient(resource) && !isMappedType("Patient")) return;
    const skip = (code: string, message: string) => {
      o.errors.push({ code, message: `${where}${message}`, structural: false });
      o.skipped++;
      // Resolved as a mapped resource's patient would be; one naming no patient of the file stays job-level only.
      const patient = isPatient(resource) ? this.refOf(resource) : patientOf(resource);
      if (typeof patient === "string") o.skippedFor.push(patient);
    };
    const derived = deriveLogs(resource, { resolve }, reference);
    if (!derived.ok) return skip(derived.code, derived.message);
    if (isPatient(resource)) for (const l of derived.logs) l.timestamp ??= this.readAt;
    if (derived.logs.some((l) => l.timestamp === undefined)) {
      return skip("fhir_unmappable", `${resource.resourceType} has no clinical date (recordedDate, onset, effective...): a historical log needs a timestamp`);
    }
    const patient = isPatient(resource) ? this.refOf(resource) : patientOf(resource);
    if (patient === undefined) return;
    if (typeof patient !== "string") {
      o.errors.push({ ...patient, message: `${where}${resource.resourceType}${resource.id ? `/${resource.id}` : ""} ${patient.message}` });
      return;
    }
    o.rows.push(...logRowsOf(derived.logs, patient, resource, line));
  }
}

/**
 * The log rows of one resource for one patient. Keyed by content, as POST /v1/fhir keys a
 * resource sent without a key, but over the patient's reference in the file (its id is
 * not known yet): the same resource in a later job, for the same identifier, is a
 * duplicate of what an earlier job stored.
 */
function logRowsOf(logs: FhirLog[], patient: string, resource: Resource, line: number): string[] {
  const key = contentKey(patient, resource);
  return logs.map((l, n) =>
    JSON.stringify({ type: "log", data: { ...l, patient_id: patient, idempotency_key: `${key}:${n}`, metadata: { ...l.metadata, fhir_line: line } } }),
  );
}
