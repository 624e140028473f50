import type { Patient as FhirPatient } from "@medplum/fhirtypes";
import { dateOf } from "../../fhir/lib/datatypes.js";
import { isAppError } from "../errors.js";
import { newPatient } from "../control/patient-records.js";
import type { ExternalIdentifier, PatientStore } from "../control/patients.js";
import type { WriteScope } from "../logs/log-writer.js";

/** What a Patient entry of a Bundle is to this service. */
export type PatientMatch =
  | { kind: "found"; patientId: string }
  | { kind: "create"; identifiers: ExternalIdentifier[] }
  | { kind: "missing"; message: string; path: (string | number)[] }
  /** Its identifiers belong to two different patients: reusing either would put its data on the wrong one. */
  | { kind: "ambiguous"; message: string; path: (string | number)[] };

/** The identifiers the service can key a patient by: both system and value, within its bounds. */
export function identifiersOf(p: FhirPatient): ExternalIdentifier[] {
  const out: ExternalIdentifier[] = [];
  for (const i of p.identifier ?? []) {
    if (i.system && i.value && i.system.length <= 200 && i.value.length <= 200) out.push({ system: i.system, value: i.value });
  }
  return out;
}

/**
 * A Bundle's Patient as one of this project's patients: by the service's own id (a
 * Patient whose id is a patient id here), else by any of its identifiers; when neither
 * finds one, it is to be created if the caller allows it and it has an identifier (so
 * that sending the Bundle again finds the patient instead of making a second).
 */
export async function matchPatient(patients: PatientStore, scope: WriteScope, p: FhirPatient, mayCreate: boolean): Promise<PatientMatch> {
  const project = scope.project_id;
  const allowed = (id: string) => scope.only_patient_id === undefined || scope.only_patient_id === id;
  if (p.id && allowed(p.id) && (await patients.getActive(project, p.id))) return { kind: "found", patientId: p.id };
  const identifiers = identifiersOf(p);
  const holders = new Map<string, string>();
  for (const e of identifiers) {
    const found = await patients.findByExternalId(project, e);
    if (found && allowed(found.id) && !holders.has(found.id)) holders.set(found.id, `${e.system}|${e.value}`);
  }
  if (holders.size > 1) {
    const who = [...holders].map(([id, identifier]) => `${identifier} is ${id}'s`).join(", ");
    const message = `the Patient's identifiers belong to different patients (${who}): reusing either would put its data on the wrong patient; send each patient's own identifiers`;
    return { kind: "ambiguous", path: ["identifier"], message };
  }
  const [holder] = holders.keys();
  if (holder !== undefined) return { kind: "found", patientId: holder };
  const named = identifiers.map((e) => `${e.system}|${e.value}`).join(", ");
  if (!mayCreate || scope.only_patient_id !== undefined) {
    const how = scope.only_patient_id !== undefined ? "a patient token writes only for its own patient" : "create it first (POST /v1/patients) or send create_patients=true";
    return { kind: "missing", path: ["identifier"], message: `no patient of this project has ${p.id ? `id ${p.id}` : "this Patient's id"}${named ? ` or identifier ${named}` : ""}: ${how}` };
  }
  if (identifiers.length === 0) {
    return { kind: "missing", path: ["identifier"], message: "a Patient to create needs an identifier with system and value, so that sending the Bundle again finds it" };
  }
  return { kind: "create", identifiers };
}

/** A Patient's fields as POST /v1/patients takes them (an ingestion job's patient row too). */
export function patientInputOf(p: FhirPatient, identifiers: ExternalIdentifier[]) {
  const name = p.name?.find((n) => n.use === "official") ?? p.name?.[0];
  return {
    ...(name?.given?.[0] ? { first_name: name.given[0].slice(0, 200) } : {}),
    ...(name?.family ? { last_name: name.family.slice(0, 200) } : {}),
    ...(dateOf(p.birthDate) ? { date_of_birth: dateOf(p.birthDate)! } : {}),
    ...(p.gender ? { sex: p.gender } : {}),
    external_identifiers: identifiers,
  };
}

/**
 * Creates the patient a Patient entry describes; when a concurrent request created it
 * first (its identifier is taken), that patient is the answer.
 */
export async function createPatient(patients: PatientStore, scope: WriteScope, p: FhirPatient, identifiers: ExternalIdentifier[]): Promise<string> {
  const created = newPatient(patientInputOf(p, identifiers), scope, new Date().toISOString());
  try {
    await patients.create(created);
    return created.id;
  } catch (err) {
    if (!isAppError(err) || err.code !== "conflict") throw err;
    for (const e of identifiers) {
      const found = await patients.findByExternalId(scope.project_id, e);
      if (found) return found.id;
    }
    throw err;
  }
}
