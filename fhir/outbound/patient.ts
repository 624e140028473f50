import type { Address as FhirAddress, ContactPoint, HumanName, Identifier, Patient } from "@medplum/fhirtypes";
import type { Address, DemographicsDoc } from "../../readmodels/modules/demographics/index.js";
import { moduleEntry } from "../../readmodels/patient-state.js";
import { EXTENSION_KEYS, objectAt } from "../lib/extensions.js";
import { compact, mapped, PATIENT_SYSTEM, textConcept, uniqueSorted, type Mapped, type OutboundInput } from "./lib.js";

const GENDERS: Record<string, Patient["gender"]> = {
  male: "male", m: "male", female: "female", f: "female", other: "other", unknown: "unknown", u: "unknown",
};
const TELECOM_SYSTEMS = new Set(["phone", "fax", "email", "pager", "url", "sms", "other"]);
const TELECOM_USES = new Set(["home", "work", "temp", "old", "mobile"]);

function nameOf(d: DemographicsDoc | undefined, p: OutboundInput["patient"]): HumanName[] {
  const text = d?.name ?? ([p.first_name, p.last_name].filter(Boolean).join(" ") || undefined);
  // The parts FHIR in kept with demographics' name, while that is still the name; else the record's.
  const parts = objectAt(d?.extensions[EXTENSION_KEYS.nameParts]);
  const kept = d?.name !== undefined && parts.name === d.name && Array.isArray(parts.given);
  const keptGiven = kept ? (parts.given as unknown[]).filter((g): g is string => typeof g === "string") : [];
  const given = kept ? (keptGiven.length > 0 ? keptGiven : undefined) : p.first_name ? [p.first_name] : undefined;
  const family = kept ? (typeof parts.family === "string" ? parts.family : undefined) : (p.last_name ?? undefined);
  if (!text && !given && !family) return [];
  // The demographics name is one string: it is the text; the record's parts are given and family.
  return [compact<HumanName>({ use: "official", text, family, given })];
}

function addressOf(a: Address): FhirAddress | undefined {
  const out = compact<FhirAddress>({ line: a.street ? [a.street] : undefined, city: a.city, state: a.state, postalCode: a.zip, country: a.country });
  return Object.keys(out).length > 0 ? out : undefined;
}

function telecomOf(d: DemographicsDoc | undefined, p: OutboundInput["patient"]): ContactPoint[] {
  const out: ContactPoint[] = [];
  const add = (c: ContactPoint) => {
    if (c.value && !out.some((o) => o.system === c.system && o.value === c.value)) out.push(c);
  };
  for (const t of d?.telecom ?? []) {
    const system = t.system && TELECOM_SYSTEMS.has(t.system) ? t.system : "other";
    add(compact<ContactPoint>({ system: system as ContactPoint["system"], value: t.value, use: t.use && TELECOM_USES.has(t.use) ? (t.use as ContactPoint["use"]) : undefined, rank: t.rank }));
  }
  add({ system: "phone", value: d?.phone });
  add({ system: "email", value: d?.email });
  add({ system: "phone", value: p.phone_number ?? undefined });
  add({ system: "email", value: p.email ?? undefined });
  return out;
}

function identifiersOf(d: DemographicsDoc | undefined, p: OutboundInput["patient"]): Identifier[] {
  const out: Identifier[] = [{ system: PATIENT_SYSTEM, value: p.id }];
  const add = (i: Identifier) => {
    if (!out.some((o) => o.system === i.system && o.value === i.value)) out.push(i);
  };
  for (const e of p.external_identifiers) add({ system: e.system, value: e.value });
  for (const e of d?.identifiers ?? []) add(compact<Identifier>({ system: e.system, value: e.value, type: textConcept(e.type) }));
  return out;
}

/**
 * The patient: demographics (as last written) over the patient record, which fills what
 * demographics never gave. Identifiers: the service's own id, the record's external
 * identifiers and demographics' identifiers, systems as sent. The log ids are the
 * demographics logs that wrote it (the record is no log).
 */
export function patientResource({ state, patient }: OutboundInput): Mapped<Patient> {
  const entry = moduleEntry(state, "demographics");
  const d = entry?.payload;
  const sex = (d?.sex ?? patient.sex ?? "").trim().toLowerCase();
  const addresses = (d?.addresses ?? (d?.address ? [d.address] : [])).map(addressOf).filter((a): a is FhirAddress => a !== undefined);
  const resource = compact<Omit<Patient, "id">>({
    resourceType: "Patient",
    identifier: identifiersOf(d, patient),
    name: nameOf(d, patient),
    telecom: telecomOf(d, patient),
    gender: GENDERS[sex],
    birthDate: d?.dob ?? patient.date_of_birth ?? undefined,
    address: addresses,
    maritalStatus: textConcept(d?.marital_status),
    communication: d?.language ? [{ language: { coding: [{ system: "urn:ietf:bcp:47", code: d.language }] } }] : undefined,
  });
  const sources = d?.sources ?? [];
  // No key: the Patient's id is the one every other resource's subject names (patientFullUrl).
  return mapped<Patient>(patient.id, [], resource, uniqueSorted(sources.map((s) => s.log_id)), entry?.updated_at ?? "");
}
