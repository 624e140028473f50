import type { CodeableConcept, HumanName, Identifier, Reference } from "@medplum/fhirtypes";
import type { MapContext, Resource } from "../types.js";
import { conceptText, humanName } from "./datatypes.js";

const NPI = "http://hl7.org/fhir/sid/us-npi";

/** The fields of the resources a reference may name that say who or what they are. */
interface Named {
  name?: HumanName[] | string;
  code?: CodeableConcept | CodeableConcept[];
  identifier?: Identifier[];
  practitioner?: Reference;
}

const named = (r: Resource | undefined) => r as Named | undefined;

/**
 * What a reference names, for a person to read: its display, else the name of the resource
 * it resolves to (a person's HumanName, an organization's or location's name, a
 * condition's code). A reference that resolves to nothing and has no display has no name.
 */
export function nameOf(ref: Reference | undefined, ctx: MapContext): string | undefined {
  if (ref?.display?.trim()) return ref.display.trim();
  const r = named(ref?.reference ? ctx.resolve(ref.reference) : undefined);
  if (!r) return undefined;
  if (typeof r.name === "string") return r.name.trim() || undefined;
  if (Array.isArray(r.name)) return humanName(r.name);
  if (r.practitioner) return nameOf(r.practitioner, ctx);
  return conceptText(Array.isArray(r.code) ? r.code[0] : r.code);
}

/** The NPI of the practitioner a reference resolves to (through a PractitionerRole too). */
function npiOf(ref: Reference | undefined, ctx: MapContext): string | undefined {
  const r = named(ref?.reference ? ctx.resolve(ref.reference) : undefined);
  if (!r) return undefined;
  return r.identifier?.find((i) => i.system === NPI)?.value ?? (r.practitioner ? npiOf(r.practitioner, ctx) : undefined);
}

/** The catalog's Clinician (name, npi, role) for a reference to a practitioner; undefined when it says none of them. */
export function clinicianOf(ref: Reference | undefined, ctx: MapContext, role?: string): { name?: string; npi?: string; role?: string } | undefined {
  const out: { name?: string; npi?: string; role?: string } = {};
  const name = nameOf(ref, ctx);
  const npi = npiOf(ref, ctx);
  if (name) out.name = name;
  if (npi) out.npi = npi;
  if (role) out.role = role;
  return Object.keys(out).length > 0 ? out : undefined;
}
